"""Issue 8.10 through train(): a gs:// failure in the middle of a save is one clear error, the previous checkpoint
stays the latest, and training run again (a new process, as after the error) ends with the weights of an
uninterrupted run.

tests/test_checkpointer_gcs.py checks the Checkpointer itself; here the Estimator drives it. Offline: the GCS
emulator (tests/gcs_emulator.py) with tests/gcs_faults.py answering 503 to the upload of model.ckpt-4's index.
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
BUCKET = "train-failure"
RUN = f"gs://{BUCKET}/run"

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")

# argv: model_dir, max_steps. Trains the tiny crash-suite model; prints how train() ended and the weights.
_TRAIN = r'''
import json, sys
import numpy as np
from estimators.checkpoint.checkpointer import CheckpointSaveError
from tests import crash_worker as w

model_dir, max_steps = sys.argv[1], int(sys.argv[2])
est = w.estimator(model_dir, iterations_per_loop=2, save_steps=2)
out = {"latest_before": est.latest_checkpoint()}
try:
    est.train(w.input_fn, max_steps=max_steps)
    out["values"] = {name: est.get_variable_value(name).tolist() for name in est.get_variable_names()}
except CheckpointSaveError as err:
    out["error"] = str(err)
out["latest_after"] = est.latest_checkpoint()
print("RESULT " + json.dumps(out), flush=True)
'''


def _train(env: dict, model_dir: str, max_steps: int) -> dict:
    done = launcher.run([sys.executable, "-c", _TRAIN, model_dir, str(max_steps)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, f"exit {done.returncode}:\n{done.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """train() to step 6 with the fault (fails saving step 4), then again without it; and a local reference."""
    local = str(tmp_path_factory.mktemp("gcs_failure") / "uninterrupted")
    with GcsEmulator(BUCKET) as gcs:
        relay = insert_relay(gcs, {"run/model.ckpt-4.index": "error"})
        try:
            env = dict(os.environ, **gcs.env(), TF_CPP_MIN_LOG_LEVEL="3",
                       PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
            failed = _train(env, RUN, 6)
            hit = list(relay.failed)
            names_after_failure = set(gcs.object_names())
            relay.rules.clear()
            again = _train(env, RUN, 6)
            reference = _train(env, local, 6)
        finally:
            relay.close()
    return {"failed": failed, "hit": hit, "names": names_after_failure, "again": again, "reference": reference}


def test_a_gcs_error_mid_save_stops_train_with_one_line_naming_the_latest_checkpoint(runs):
    assert any("model.ckpt-4.index" in request for request in runs["hit"]), "the fault was never hit"
    error = runs["failed"]["error"]
    assert error.startswith(f"Could not save the checkpoint for step 4 in {RUN}: ")
    assert error.endswith(f"The latest checkpoint is still {RUN}/model.ckpt-2.") and "\n" not in error


def test_the_previous_checkpoint_stays_latest_and_nothing_half_saved_is_published(runs):
    assert runs["failed"]["latest_after"] == f"{RUN}/model.ckpt-2"
    assert "run/model.ckpt-2.index" in runs["names"]
    assert not [n for n in runs["names"] if n.startswith("run/model.ckpt-4.index")]


def test_training_again_resumes_from_it_and_ends_with_the_uninterrupted_weights(runs):
    again, reference = runs["again"], runs["reference"]
    assert again["latest_before"] == f"{RUN}/model.ckpt-2"
    assert again["latest_after"] == f"{RUN}/model.ckpt-6"
    assert again["values"] == reference["values"]  # bit for bit: the same steps on the same batches


def test_a_short_burst_of_503s_on_the_state_file_write_is_retried_and_training_goes_on(tmp_path):
    """Writes get the reads' bounded retry: five 503s in a row on uploads of `checkpoint` (TensorFlow's GCS
    client alone gives up after its own retries) cost a few seconds, not the run."""
    reference = _train(dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
                            PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)),
                       str(tmp_path / "uninterrupted"), 4)
    with GcsEmulator(BUCKET) as gcs:
        relay = insert_relay(gcs, {"name=burst/checkpoint": "error"}, times={"name=burst/checkpoint": 5})
        try:
            env = dict(os.environ, **gcs.env(), TF_CPP_MIN_LOG_LEVEL="3",
                       PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
            burst = _train(env, f"gs://{BUCKET}/burst", 4)
        finally:
            relay.close()
    assert len(relay.failed) == 5, [r for r in relay.seen if "checkpoint" in r]
    assert "error" not in burst, burst.get("error")
    assert burst["latest_after"] == f"gs://{BUCKET}/burst/model.ckpt-4"
    assert burst["values"] == reference["values"]
