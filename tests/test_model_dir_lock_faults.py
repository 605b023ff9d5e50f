"""Disk full or a read-only model_dir under the trainer lock: the failed save is the error (issue 17, item 8).

The lock's heartbeat runs before every checkpoint save. When the storage fails there, the error a user sees
must be the failed save naming the latest good checkpoint, not the lock's ResourceExhaustedError on
`trainer.lock.tmp...`, and no 0-byte lock temp file may stay. The storage failure is injected where Python
and the Saver write (TensorFlow's file_io and Saver.save), as a full disk or a read-only folder answers.
"""

from __future__ import annotations

import os

import pytest
import tensorflow as tf
from tensorflow.python.lib.io import file_io

from estimators import Estimator, EstimatorSpec, RunConfig, TPUConfig, TPUEstimator
from estimators.checkpoint.checkpointer import CheckpointSaveError
from tests import engine_models as m

X, Y = m.dataset(64)


def _tf1_model_fn(features, labels, mode):
    """tf.compat.v1 softmax regression: takes the graph path."""
    w = tf.compat.v1.get_variable("w", [m.FEATURES, m.CLASSES], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, tf.matmul(features, w))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return EstimatorSpec(mode, loss=loss, train_op=train_op)


def _estimator(model_dir, execution: str):
    """A trainer saving every 2 steps: on the TF2 path (Keras model_fn) or the graph path (tf.compat.v1 one)."""
    config = RunConfig(model_dir=str(model_dir), save_checkpoints_steps=2, execution=execution,
                       tpu_config=TPUConfig(2))
    if execution == "graph":
        return Estimator(_tf1_model_fn, config=config)
    return TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=16, eval_batch_size=16)


def _input_fn(execution: str):
    if execution == "graph":
        return lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(16)
    return m.train_input_fn(X, Y)


def _disk_full(filename, *args, **kwargs):
    """What a full disk does to TensorFlow's file_io: the file is created, writing it fails."""
    with open(filename, "wb"):
        pass
    raise tf.errors.ResourceExhaustedError(None, None, f"{filename}; No space left on device")


def _read_only(filename, *args, **kwargs):
    raise tf.errors.PermissionDeniedError(None, None, f"{filename}; Operation not permitted")


def _storage_fails(monkeypatch, fault) -> None:
    """From now on every write to model_dir fails with `fault` (Python's file_io and the Saver's)."""
    monkeypatch.setattr(file_io, "write_string_to_file", fault)
    monkeypatch.setattr(file_io, "delete_file", _read_only if fault is _read_only else file_io.delete_file)
    monkeypatch.setattr(tf.compat.v1.train.Saver, "save", lambda self, sess, save_path, **kwargs: fault(save_path))


@pytest.mark.parametrize("execution", ["tf2", "graph"])
@pytest.mark.parametrize("fault", [_disk_full, _read_only], ids=["disk full", "read-only"])
def test_storage_failing_under_the_lock_is_the_failed_save_naming_the_latest_checkpoint(tmp_path, monkeypatch,
                                                                                         execution, fault):
    estimator = _estimator(tmp_path, execution)
    estimator.train(_input_fn(execution), steps=2)
    _storage_fails(monkeypatch, fault)
    latest_named = r"^Could not .*The latest checkpoint is still .*model\.ckpt-2\.$"
    with pytest.raises(CheckpointSaveError, match=latest_named) as raised:
        estimator.train(_input_fn(execution), steps=2)
    assert "trainer.lock" not in str(raised.value)
    monkeypatch.undo()
    assert estimator.latest_checkpoint() == os.path.join(str(tmp_path), "model.ckpt-2")


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_a_full_disk_leaves_no_temp_file(tmp_path, monkeypatch, execution):
    estimator = _estimator(tmp_path, execution)
    estimator.train(_input_fn(execution), steps=2)
    _storage_fails(monkeypatch, _disk_full)
    with pytest.raises(CheckpointSaveError):
        estimator.train(_input_fn(execution), steps=2)
    assert [name for name in os.listdir(tmp_path) if ".tmp" in name or name.startswith("trainer.lock")] == []
