"""A model_dir of tf.estimator 2.15's model_to_estimator in its default, object-based checkpoint format
(tests/fixtures/keras215_object, written by make_215.py there) evaluates, predicts and trains on as in 2.15."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import estimators
from tests import tiers

tf_keras = pytest.importorskip("tf_keras", reason=tiers.missing_package({"needs_tf_keras"}))
FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras215_object")
X, Y = np.ones((8, 3), np.float32), np.ones((8, 1), np.float32)
LOSS_AT_3, LOSS_AT_5 = 0.51168823, 0.24745655  # 2.15 at step 3, and 2 steps on (continue_215.py)


def _model():
    tf_keras.backend.clear_session()
    model = tf_keras.Sequential([tf_keras.layers.Dense(4, input_shape=(3,), name="dense"),
                                 tf_keras.layers.Dense(1, name="out")])
    model.compile("sgd", "mse")
    return model


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"dense_input": X}, Y)).repeat().batch(4)


def _estimator(tmp_path):
    """As a ported program builds it: the default checkpoint_format."""
    model_dir = shutil.copytree(FIXTURE, tmp_path / "md")
    return estimators.model_to_estimator(keras_model=_model(), model_dir=str(model_dir))


def test_it_evaluates_to_2_15s_loss_at_its_global_step(tmp_path):
    result = _estimator(tmp_path).evaluate(_input_fn, steps=1)
    assert result["global_step"] == 3
    assert result["loss"] == pytest.approx(LOSS_AT_3, rel=1e-5)


def test_training_continues_from_its_global_step_as_2_15_did(tmp_path):
    estimator = _estimator(tmp_path)
    estimator.train(_input_fn, steps=2)
    result = estimator.evaluate(_input_fn, steps=1)
    assert result["global_step"] == 5
    assert result["loss"] == pytest.approx(LOSS_AT_5, rel=1e-5)


def test_the_checkpoints_it_writes_keep_2_15s_object_based_keys(tmp_path):
    estimator = _estimator(tmp_path)
    estimator.train(_input_fn, steps=1)
    written = set(tf.train.load_checkpoint(estimator.latest_checkpoint()).get_variable_to_shape_map())
    fixture = set(tf.train.load_checkpoint(os.path.join(FIXTURE, "model.ckpt-3")).get_variable_to_shape_map())
    assert estimator.latest_checkpoint().endswith("model.ckpt-4")
    assert fixture <= written


def test_it_predicts_with_the_restored_weights(tmp_path):
    estimator = _estimator(tmp_path)
    model = _model()
    model.load_weights(os.path.join(FIXTURE, "model.ckpt-3")).expect_partial()
    predictions = estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"dense_input": X}).batch(4))
    np.testing.assert_allclose(np.stack([p["out"] for p in predictions]), model.predict(X, verbose=0), rtol=1e-6)


def test_the_stop_at_checkpoint_step_hook_reads_the_object_based_global_step():
    from estimators.experimental.checkpoint_step_hook import checkpoint_step

    assert checkpoint_step(FIXTURE) == 3  # 2.15 kept it as estimator_global_step there
