"""Resuming a gs:// model_dir while GCS fails: a failed read is never "no checkpoint" (issue 17, item 1).

Also the state file on gs:// as TensorFlow reads it (item 4).

Offline: tests/gcs_emulator.py answers for GCS; tests/gcs_faults.py answers 503 to chosen requests. A run
trains to step 6 (model.ckpt-2, -4, -6 kept). Then, each in a new process as after a disconnect:
persistent 503s on the `checkpoint` state file must stop train() with one error and change nothing;
transient 503s on the state-file read and on the listing (more than TensorFlow's own retry absorbs)
must still resume from model.ckpt-6.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator

import pytest

from tests import launcher
from tests.gcs_emulator import GcsEmulator, unavailable_reason
from tests.gcs_faults import insert_relay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUCKET = "resume-faults-test"
RUN = f"gs://{BUCKET}/run"
STATE_FILE = "run/checkpoint"  # the `checkpoint` state file's object: its metadata and media requests
NEWEST_DATA = "run/model.ckpt-8.data"  # the newest checkpoint's values, read by the restore of a resume
LISTING = "delimiter=/&prefix=run/"  # the listing of model_dir's files (decoded query of the objects list)

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")

_PHASE = r'''
import json, sys
from estimators import RunConfig, TPUConfig, TPUEstimator
from tests import engine_models as m

steps, run = int(sys.argv[1]), sys.argv[2]
config = RunConfig(model_dir=run, save_checkpoints_steps=2, keep_checkpoint_max=3, tpu_config=TPUConfig(2))
estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, params={"adam": True},
                         train_batch_size=16, eval_batch_size=16, predict_batch_size=16)
x, y = m.dataset(64)
out = {}
try:
    estimator.train(m.train_input_fn(x, y), steps=steps)
    out["latest"] = estimator.latest_checkpoint()
    if steps == 6:  # the first run: TensorFlow's own readers on the state file written on gs://
        import tensorflow as tf
        out["tf_latest"] = tf.train.latest_checkpoint(run)
        out["tf_listed"] = list(tf.train.get_checkpoint_state(run).all_model_checkpoint_paths)
        out["state_text"] = tf.io.gfile.GFile(run + "/checkpoint").read()
except Exception as err:
    out["error"] = f"{type(err).__name__}: {err}"
print("RESULT " + json.dumps(out), flush=True)
'''


def _objects(gcs: GcsEmulator) -> dict[str, str]:
    """{object name: generation} under run/: a rewritten object gets a new generation."""
    listing = gcs.request("GET", f"/storage/v1/b/{BUCKET}/o?prefix=run/")
    return {item["name"]: str(item.get("generation")) for item in listing.get("items", [])}


def _phase(gcs: GcsEmulator, steps: int, rules: dict[str, str] | None = None,
           times: dict[str, int] | None = None) -> tuple[dict, list[str], str]:
    """Trains `steps` in a fresh process with the faults; (its record, failed requests, stderr)."""
    relay = insert_relay(gcs, rules or {}, times)
    try:
        env = dict(os.environ, **gcs.env(), TF_CPP_MIN_LOG_LEVEL="2",
                   PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
        done = launcher.run([sys.executable, "-c", _PHASE, str(steps), RUN], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        relay.close()
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        pytest.fail(f"phase failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(lines[-1][len("RESULT "):]), list(relay.failed), done.stderr


@pytest.fixture(scope="module")
def runs() -> Iterator[dict]:
    with GcsEmulator(BUCKET) as gcs:
        record: dict = {}
        record["first"], _, _ = _phase(gcs, 6)
        record["objects_before"] = _objects(gcs)
        record["persistent"], record["persistent_failed"], _ = _phase(gcs, 2, {STATE_FILE: "error"})
        record["objects_after_persistent"] = _objects(gcs)
        record["transient"], record["transient_failed"], record["transient_log"] = _phase(
            gcs, 2, {STATE_FILE: "error", LISTING: "error"}, {STATE_FILE: 2, LISTING: 2})
        record["objects_before_restore_fault"] = _objects(gcs)
        record["restore"], record["restore_failed"], record["restore_log"] = _phase(gcs, 2, {NEWEST_DATA: "error"})
        record["objects_after_restore_fault"] = _objects(gcs)
        yield record


def test_the_first_run_leaves_three_checkpoints(runs):
    assert runs["first"]["latest"] == f"{RUN}/model.ckpt-6"
    assert {f"run/model.ckpt-{step}.index" for step in (2, 4, 6)} <= set(runs["objects_before"])


def test_a_state_file_that_cannot_be_read_is_one_error_naming_model_dir_and_the_fault(runs):
    assert runs["persistent_failed"], "the fault was never hit"
    error = runs["persistent"]["error"]
    assert error.startswith(f"ModelDirUnreadableError: Could not read model_dir {RUN} (the `checkpoint` state file")
    assert "503" in error or "injected by FaultRelay" in error or "Unavailable" in error, error
    assert "\n" not in error


def test_a_state_file_that_cannot_be_read_changes_nothing_in_model_dir(runs):
    assert runs["objects_after_persistent"] == runs["objects_before"]


def test_transient_faults_on_the_state_file_and_the_listing_still_resume_from_the_newest_checkpoint(runs):
    assert runs["transient"] == {"latest": f"{RUN}/model.ckpt-8"}, runs["transient_log"][-3000:]
    assert "starting fresh" not in runs["transient_log"]
    failed = runs["transient_failed"]
    assert any(STATE_FILE in request for request in failed) and any(LISTING in request for request in failed)


def test_tensorflow_reads_the_state_file_written_on_gcs(runs):
    first = runs["first"]
    assert first["state_text"] == "".join(f'{key}: "model.ckpt-{step}"\n' for key, step in [
        ("model_checkpoint_path", 6), ("all_model_checkpoint_paths", 2), ("all_model_checkpoint_paths", 4),
        ("all_model_checkpoint_paths", 6)])
    assert first["tf_latest"] == f"{RUN}/model.ckpt-6"
    assert first["tf_listed"] == [f"{RUN}/model.ckpt-{step}" for step in (2, 4, 6)]


def test_a_newest_checkpoint_that_cannot_be_read_stops_train_instead_of_resuming_from_an_older_one(runs):
    assert runs["restore_failed"], "the fault was never hit"
    assert "error" in runs["restore"], runs["restore_log"][-3000:]
    assert "model.ckpt-8" in runs["restore"]["error"] and "\n" not in runs["restore"]["error"]
    assert "starting fresh" not in runs["restore_log"]


def test_a_newest_checkpoint_that_cannot_be_read_changes_nothing_in_model_dir(runs):
    assert runs["objects_after_restore_fault"] == runs["objects_before_restore_fault"]
