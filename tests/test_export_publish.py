"""An export version appears only complete, on a local disk and on gs://, and what a failed or killed export
left is removed (issue 17.2). Each program runs in its own process: gs:// settings are read when TensorFlow
loads, and kill -9 ends the process. gs:// is the offline emulator (tests/gcs_emulator.py) with
tests/gcs_faults.py failing chosen requests.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests import launcher
from tests.gcs_emulator import GcsEmulator, unavailable_reason
from tests.gcs_faults import insert_relay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUCKET = "exports"

# argv: export_dir_base, how ("normal" | "kill_mid_write" | "kill_before_publish" | "kill_mid_copy"). Publishes a
# tiny SavedModel; prints the result, the error, and what export_dir_base holds afterwards.
_EXPORT = r'''
import json, os, signal, sys
import tensorflow as tf
from estimators.export import publish

base, how = sys.argv[1], sys.argv[2]
module = tf.Module()
module.v = tf.Variable([1.0, 2.0])
module.f = tf.function(lambda x: x * module.v, input_signature=[tf.TensorSpec([2], tf.float32)])

def write(folder):
    if how == "kill_mid_write":  # the SavedModel half written: variables there, no saved_model.pb yet
        tf.io.gfile.makedirs(folder + "/variables")
        tf.io.gfile.GFile(folder + "/variables/variables.index", "w").write("partial")
        os.kill(os.getpid(), signal.SIGKILL)
    tf.saved_model.save(module, folder, signatures=module.f)

if how == "kill_before_publish":
    tf.io.gfile.rename = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
if how == "kill_mid_copy":
    copy, copied = tf.io.gfile.copy, []
    def dying_copy(source, destination, overwrite=False):
        if "/temp-" in source and len(copied) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        copied.append(destination)
        return copy(source, destination, overwrite=overwrite)
    tf.io.gfile.copy = dying_copy
out = {}
try:
    final = publish.publish_export(base, write, None)
    out["final"] = final
    out["served"] = tf.saved_model.load(final).signatures["serving_default"](x=tf.constant([3.0, 4.0]))
    out["served"] = [float(v) for v in list(out["served"].values())[0].numpy()]
except Exception as err:
    out["error"] = f"{type(err).__name__}: {err}"
out["entries"] = sorted(n.rstrip("/") for n in tf.io.gfile.listdir(base))
print("RESULT " + json.dumps(out), flush=True)
'''


def _export(base: str, how: str = "normal", env: dict | None = None) -> dict | None:
    """The program's result, or None when it was killed (-9)."""
    env = dict(env or os.environ, TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    done = launcher.run([sys.executable, "-c", _EXPORT, base, how], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)
    if done.returncode == -9:
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, f"exit {done.returncode}:\n{done.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def _versions(entries: list[str]) -> list[str]:
    return [e for e in entries if e.isdigit()]


def test_a_local_export_killed_before_publishing_leaves_a_temporary_the_next_export_removes(tmp_path):
    base = str(tmp_path / "export")
    assert _export(base, "kill_before_publish") is None
    left = sorted(os.listdir(base))  # nothing that looks like a version: the temporary and its claim
    assert len(left) == 2 and left[0].startswith("temp-") and left[1] == left[0] + ".export-in-progress"
    again = _export(base)
    assert again["served"] == [3.0, 8.0]
    assert again["entries"] == [os.path.basename(again["final"])]


def test_an_export_killed_while_writing_its_saved_model_is_removed_by_the_next_export_at_once(tmp_path):
    """Its claim beside the temporary names a process that is gone: no hour's wait, nothing left behind."""
    base = str(tmp_path / "export")
    assert _export(base, "kill_mid_write") is None
    left = sorted(os.listdir(base))
    assert len(left) == 2 and left[0].startswith("temp-") and left[1] == left[0] + ".export-in-progress"
    again = _export(base)
    assert again["served"] == [3.0, 8.0]
    assert again["entries"] == [os.path.basename(again["final"])]


def test_a_live_exports_temporary_folder_is_left_alone(tmp_path):
    """A temp folder whose owner file names a running process (this one) is another export in progress."""
    import socket
    import time

    base = tmp_path / "export"
    busy = base / "temp-1700000000"
    busy.mkdir(parents=True)
    (busy / ".export-in-progress").write_text(f"{socket.gethostname()} {os.getpid()} {time.time():.0f}\n")
    result = _export(str(base))
    assert "temp-1700000000" in result["entries"]


gcs_only = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")


@pytest.fixture()
def gcs():
    with GcsEmulator(BUCKET) as emulator:
        yield emulator


@gcs_only
def test_a_gcs_fault_while_publishing_leaves_no_version_and_one_clear_error(gcs):
    """503s on the uploads into the version folder (gs:// has no rename: TensorFlow copies each object, a
    download and an upload), after the temporary was written whole: ExportPublishError naming the export;
    neither the version nor the temporary remains; exporting again publishes one that loads."""
    base = f"gs://{BUCKET}/model/export"
    relay = insert_relay(gcs, {"uploadType=resumable&name=model/export/1": "error"})  # not temp-<ts>/
    try:
        failed = _export(base, env=dict(os.environ, **gcs.env()))
        hit = list(relay.failed)
        relay.rules.clear()
        again = _export(base, env=dict(os.environ, **gcs.env()))
    finally:
        relay.close()
    assert hit, "the fault was never hit"
    assert failed["error"].startswith("ExportPublishError: Could not publish the export gs://")
    assert "Nothing of it was left" in failed["error"] and "\n" not in failed["error"]
    assert failed["entries"] == []
    assert again["served"] == [3.0, 8.0]
    assert again["entries"] == [os.path.basename(again["final"])]


@gcs_only
def test_a_gcs_export_killed_mid_copy_is_never_a_version_and_the_next_export_removes_it(gcs):
    """Killed after copying two files into the version folder: that folder has no saved_model.pb (not a
    SavedModel to TensorFlow or a server); the next export removes it and the temporary."""
    base = f"gs://{BUCKET}/model/export"
    env = dict(os.environ, **gcs.env())
    assert _export(base, "kill_mid_copy", env=env) is None
    names = gcs.object_names("model/export/")
    versions = {n.split("/")[2] for n in names if n.split("/")[2].isdigit()}
    assert versions and not any(n.endswith("/saved_model.pb") and n.split("/")[2] in versions for n in names)
    again = _export(base, env=env)
    assert again["served"] == [3.0, 8.0]
    assert again["entries"] == [os.path.basename(again["final"])]
