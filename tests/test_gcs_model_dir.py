"""model_dir=gs://...: train, resume in a new process, evaluate and export through TensorFlow's GCS filesystem.

Offline: tests/gcs_emulator.py answers for GCS on 127.0.0.1. Each phase runs in a fresh process, as after a
Colab disconnect, and because TensorFlow reads the GCS_* timeouts only when it loads.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests import launcher
from tests.gcs_emulator import GcsEmulator, unavailable_reason

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUCKET = "estimator-test"
PHASE_TIMEOUT_S = 150  # one phase takes ~10 s; a broken emulator fails in seconds (short GCS timeouts)

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")

# One phase of the run, in its own process: argv = phase ("train" | "resume"), gs:// root, local folder.
_PHASE = r'''
import json, sys, time
import numpy as np
import tensorflow as tf
from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.export import build_raw_serving_input_receiver_fn
from tests import engine_models as m

phase, root, local = sys.argv[1:4]


def estimator(model_dir):
    config = RunConfig(model_dir=model_dir, save_checkpoints_steps=2, tpu_config=TPUConfig(2))
    return TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, params={"adam": True},
                        train_batch_size=16, eval_batch_size=16, predict_batch_size=16)


x, y = m.dataset(64)  # 4 batches of 16: steps 5-8 after a resume see the batches steps 5-8 of one run see
est = estimator(root + "/run")
out = {"latest_before": est.latest_checkpoint()}
started = time.monotonic()
est.train(m.train_input_fn(x, y), max_steps=4 if phase == "train" else 8)
out["train_s"] = time.monotonic() - started
out["latest_after"] = est.latest_checkpoint()
out["checkpoint_files"] = sorted(tf.io.gfile.glob(root + "/run/model.ckpt-*"))
if phase == "resume":
    out["eval"] = est.evaluate(m.eval_input_fn(x, y))
    reference = estimator(local)  # the same 8 steps without a break, on local disk
    reference.train(m.train_input_fn(x, y), max_steps=8)
    out["max_weight_diff"] = max(
        float(np.abs(est.get_variable_value(name) - reference.get_variable_value(name)).max())
        for name in reference.get_variable_names())
    receiver = build_raw_serving_input_receiver_fn(tf.TensorSpec([None, m.FEATURES], tf.float32))  # one tensor
    started = time.monotonic()
    export_dir = est.export_saved_model(root + "/export", receiver).decode()
    out["export_s"] = time.monotonic() - started
    out["export_dir"] = export_dir
    started = time.monotonic()
    served = tf.saved_model.load(export_dir).signatures["serving_default"](input=tf.constant(x))["logits"].numpy()
    out["load_s"] = time.monotonic() - started
    predicted = np.stack([p["logits"] for p in est.predict(m.predict_input_fn(x))])
    out["max_served_diff"] = float(np.abs(served - predicted).max())
print("RESULT " + json.dumps(out, default=float), flush=True)
'''


@pytest.fixture
def gcs() -> Iterator[GcsEmulator]:
    with GcsEmulator(BUCKET) as emulator:
        yield emulator


def _run_phase(gcs: GcsEmulator, phase: str, local_dir: str) -> dict:
    """Runs _PHASE in a new Python with the emulator's environment; returns its RESULT line."""
    env = dict(os.environ, **gcs.env(), TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    started = time.monotonic()
    try:
        done = launcher.run([sys.executable, "-c", _PHASE, phase, f"gs://{BUCKET}", local_dir], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=PHASE_TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        stderr = err.stderr.decode(errors="replace") if isinstance(err.stderr, bytes) else err.stderr or ""
        pytest.fail(f"{phase} phase did not finish in {PHASE_TIMEOUT_S} s; stderr tail:\n{stderr[-3000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        pytest.fail(f"{phase} phase failed (exit {done.returncode}); stderr tail:\n{done.stderr[-4000:]}")
    return dict(json.loads(lines[-1][len("RESULT "):]), process_s=time.monotonic() - started)


def test_training_resumes_from_gcs_model_dir_in_a_new_process_and_exports_there(gcs, tmp_path):
    run = f"gs://{BUCKET}/run"
    first = _run_phase(gcs, "train", str(tmp_path / "unused"))
    assert first["latest_before"] is None
    assert first["latest_after"] == f"{run}/model.ckpt-4"
    assert f"{run}/model.ckpt-4.index" in first["checkpoint_files"]

    second = _run_phase(gcs, "resume", str(tmp_path / "uninterrupted"))
    assert second["latest_before"] == f"{run}/model.ckpt-4", "the new process did not find the gs:// checkpoint"
    assert second["latest_after"] == f"{run}/model.ckpt-8"
    evaluation = second["eval"]
    assert set(evaluation) == {"accuracy", "examples", "loss", "global_step"}
    assert evaluation["global_step"] == 8 and evaluation["examples"] == 64.0
    # Weights and Adam slots came back from gs://: 4 + 4 steps equal 8 uninterrupted steps.
    assert second["max_weight_diff"] < 1e-6
    assert second["max_served_diff"] < 1e-5

    # What the bucket holds, read over the emulator's JSON API (not through TensorFlow).
    names = set(gcs.object_names())
    for step in (2, 4, 6, 8):
        assert {f"run/model.ckpt-{step}.index", f"run/model.ckpt-{step}.data-00000-of-00001"} <= names
    assert "run/checkpoint" in names
    assert any(n.startswith("run/events.out.tfevents.") for n in names), "no training summaries in model_dir"
    assert any(n.startswith("run/eval/events.out.tfevents.") for n in names), "no eval summaries in model_dir"
    export = second["export_dir"].removeprefix(f"gs://{BUCKET}/")
    assert {f"{export}/saved_model.pb", f"{export}/variables/variables.index"} <= names
    assert not [n for n in names if n.startswith("export/temp-")], "export left its temporary folder behind"
    assert gcs.refused == [], "something asked the proxy for a host other than GCS"
    print(f"gs:// timings: train 4 steps {first['train_s']:.2f} s, resume to 8 {second['train_s']:.2f} s, "
          f"export {second['export_s']:.2f} s, load {second['load_s']:.2f} s; "
          f"processes {first['process_s']:.1f} s + {second['process_s']:.1f} s")


def test_emulator_proxy_answers_only_the_google_storage_hosts(gcs):
    """The proxy never connects anywhere but the emulator: other hosts and plain HTTP get 403."""
    host, port = gcs.env()["https_proxy"].removeprefix("http://").split(":")
    for request in (b"CONNECT oauth2.googleapis.com:443 HTTP/1.1\r\n\r\n",
                    b"CONNECT www.googleapis.com:80 HTTP/1.1\r\n\r\n",
                    b"GET http://metadata.google.internal/ HTTP/1.1\r\nHost: metadata.google.internal\r\n\r\n"):
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(request)
            assert conn.recv(1024).startswith(b"HTTP/1.1 403 "), request
    assert len(gcs.refused) == 3
