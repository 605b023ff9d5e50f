"""Issue 8.9: one trainer per model_dir. A second train() is refused at start with the holder named; a lock left
by a dead trainer is taken over; evaluate/predict/export from another process work while a trainer runs."""

import logging
import os
import signal

import numpy as np
import pytest
import tensorflow as tf

from estimators.checkpoint.lock import LOCK_FILE, ModelDirLockedError
from estimators.export import build_raw_serving_input_receiver_fn
from tests import crash_worker
from tests.worker_process import Worker


@pytest.fixture
def held(tmp_path):
    """A crash_worker trainer that saved step 3 and now holds the model_dir (blocked in a saving listener)."""
    worker = Worker(tmp_path, 100, "--iterations_per_loop=3", "--save_steps=3", "--hold_after_save")
    assert worker.wait_for_event("after_save", step=3) is not None, worker.events
    yield worker
    worker.kill()


def _here(model_dir):
    return crash_worker.estimator(str(model_dir), iterations_per_loop=3, save_steps=3)


def test_a_second_trainer_is_refused_at_start_naming_the_holder(tmp_path, held):
    with pytest.raises(ModelDirLockedError, match=rf"in use by another trainer: host .*, pid {held.process.pid}, "):
        _here(tmp_path).train(crash_worker.input_fn, max_steps=100)
    assert held.process.poll() is None  # the holder goes on


def test_evaluate_predict_and_export_work_while_another_process_trains(tmp_path, held):
    estimator = _here(tmp_path)
    result = estimator.evaluate(crash_worker.eval_input_fn)
    assert result["global_step"] == 3
    x, _ = crash_worker.data()
    kernel = tf.train.load_variable(str(tmp_path / "model.ckpt-3"), "dense/kernel")
    bias = tf.train.load_variable(str(tmp_path / "model.ckpt-3"), "dense/bias")
    predictions = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(32)))
    np.testing.assert_allclose([p["logits"] for p in predictions], x @ kernel + bias, rtol=1e-5, atol=1e-6)
    receiver = build_raw_serving_input_receiver_fn(tf.TensorSpec([None, crash_worker.FEATURES], tf.float32))
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver)
    served = tf.saved_model.load(os.fsdecode(export_dir)).signatures["serving_default"]
    np.testing.assert_allclose(served(input=tf.constant(x))["logits"], x @ kernel + bias, rtol=1e-5, atol=1e-6)
    assert os.path.exists(tmp_path / LOCK_FILE) and held.process.poll() is None


def test_the_lock_of_a_killed_trainer_is_taken_over_with_a_warning(tmp_path, held, caplog):
    held.process.send_signal(signal.SIGKILL)
    held.wait()
    assert os.path.exists(tmp_path / LOCK_FILE)  # left behind, naming a process that is gone
    with caplog.at_level(logging.WARNING, logger="absl"):
        estimator = _here(tmp_path).train(crash_worker.input_fn, max_steps=9)
    assert f"process {held.process.pid} is no longer running" in caplog.text
    assert estimator.get_variable_value("global_step") == 9
    assert not os.path.exists(tmp_path / LOCK_FILE)  # released when train() returned
