"""Checkpointer and trainer lock on gs://: storage failing mid-save is one clear error, the previous checkpoint stays.

Offline: tests/gcs_emulator.py answers for GCS, and tests/gcs_faults.py fails chosen requests: uploads of
model.ckpt-4's index answer 503 (GCS failing after the data file was written: a true mid-save failure), and
every request for model.ckpt-8 finds the connection closed (the storage service gone). One process runs all
the steps (TensorFlow reads the GCS settings when it loads); each test checks one behaviour of its record.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gcs_emulator import GcsEmulator, unavailable_reason
from tests.gcs_faults import insert_relay

BUCKET = "checkpointer-test"
RUN = f"gs://{BUCKET}/run"
FAULTS = {"model.ckpt-4.index": "error", "model.ckpt-8": "drop"}

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")

_SCRIPT = r'''
import json, sys, time
import numpy as np
import tensorflow as tf
from estimators.checkpoint.checkpointer import Checkpointer, CheckpointSaveError
from estimators.checkpoint.lock import ModelDirLock, ModelDirLockedError

root = sys.argv[1]
out = {}

def variables(step, size=(3, 2)):
    return {"global_step": tf.Variable(step, dtype=tf.int64),
            "dense/kernel": tf.Variable(np.full(size, float(step), np.float32))}

checkpointer = Checkpointer(root + "/run", max_to_keep=3)
lock = ModelDirLock(root + "/run", heartbeat_every_s=None)
lock.acquire()
try:
    ModelDirLock(root + "/run", heartbeat_every_s=None).acquire()
except ModelDirLockedError as err:
    out["second_lock"] = str(err)
lock.heartbeat()

for step in (2, 4, 6, 8):
    started = time.monotonic()
    try:
        out[f"saved_{step}"] = checkpointer.save(variables(step), step)
    except CheckpointSaveError as err:
        out[f"error_{step}"] = str(err)
    out[f"save_{step}_s"] = time.monotonic() - started
    out[f"latest_after_{step}"] = checkpointer.latest()
out["checkpoints"] = checkpointer.checkpoints()

fresh = variables(0)
started = time.monotonic()
checkpointer.restore(checkpointer.latest(), fresh)
out["restore_s"] = time.monotonic() - started
out["restored_step"] = int(fresh["global_step"].numpy())
lock.release()

big = Checkpointer(root + "/big")  # the seed CNN's size: ~1.6M float32
started = time.monotonic()
path = big.save(variables(1, size=(1600, 1000)), 1)
out["big_save_s"] = time.monotonic() - started
fresh = variables(0, size=(1600, 1000))
started = time.monotonic()
big.restore(path, fresh)
out["big_restore_s"] = time.monotonic() - started
print("RESULT " + json.dumps(out), flush=True)
'''


@pytest.fixture(scope="module")
def record() -> Iterator[tuple[dict, set, list]]:
    """Runs the script against the emulator with faults; (its record, object names after, failed requests)."""
    with GcsEmulator(BUCKET) as gcs:
        relay = insert_relay(gcs, FAULTS)
        try:
            try:
                result = gcs.run_script(_SCRIPT, f"gs://{BUCKET}")
            except RuntimeError as failed_run:
                pytest.fail(str(failed_run))
            names = set(gcs.object_names())
            failed = list(relay.failed)
        finally:
            relay.close()
    print("gs:// timings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in result.items() if k.endswith("_s")))
    yield result, names, failed


def test_saves_to_gcs_are_listed_and_restored(record):
    result, names, _ = record
    assert result["saved_2"] == f"{RUN}/model.ckpt-2" and result["saved_6"] == f"{RUN}/model.ckpt-6"
    assert result["checkpoints"] == [f"{RUN}/model.ckpt-2", f"{RUN}/model.ckpt-6"]
    assert result["restored_step"] == 6
    assert {"run/checkpoint", "run/model.ckpt-6.index", "run/model.ckpt-6.data-00000-of-00001"} <= names


def test_gcs_failing_mid_save_is_one_clear_error_and_the_previous_checkpoint_stays_latest(record):
    result, names, failed = record
    assert any("model.ckpt-4.index" in request for request in failed), "the fault was never hit"
    error = result["error_4"]
    assert error.startswith(f"Could not save the checkpoint for step 4 in {RUN}: ")
    assert error.endswith(f"The latest checkpoint is still {RUN}/model.ckpt-2.") and "\n" not in error
    assert result["latest_after_4"] == f"{RUN}/model.ckpt-2"
    assert not [n for n in names if n.startswith("run/model.ckpt-4.index")], "a half-saved index was published"


def test_storage_gone_mid_run_is_one_clear_error_and_the_previous_checkpoint_stays_latest(record):
    result, _, failed = record
    assert any("model.ckpt-8" in request and request.endswith("drop") for request in failed)
    assert result["error_8"].endswith(f"The latest checkpoint is still {RUN}/model.ckpt-6.")
    assert result["latest_after_8"] == f"{RUN}/model.ckpt-6"


def test_the_trainer_lock_works_on_gcs(record):
    result, names, _ = record
    assert "is in use by another trainer: host " in result["second_lock"]
    assert "run/trainer.lock" not in names, "release() left the lock object behind"
