"""A model_dir of tf.estimator 2.15's model_to_estimator in its default, object-based checkpoint format
(tests/fixtures/keras215_object, written by make_215.py there): refused with the way forward, which works."""

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


def _model():
    tf_keras.backend.clear_session()
    model = tf_keras.Sequential([tf_keras.layers.Dense(4, input_shape=(3,), name="dense"),
                                 tf_keras.layers.Dense(1, name="out")])
    model.compile("sgd", "mse")
    return model


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"dense_input": X}, Y)).repeat().batch(4)


def _checkpoints(model_dir) -> list[str]:
    return sorted(name for name in os.listdir(model_dir) if name.startswith(("model.ckpt", "checkpoint")))


def test_training_on_it_is_refused_naming_the_format_and_its_checkpoints_stay(tmp_path):
    model_dir = shutil.copytree(FIXTURE, tmp_path / "md")
    before = _checkpoints(model_dir)
    estimator = estimators.model_to_estimator(keras_model=_model(), model_dir=str(model_dir))
    with pytest.raises(ValueError, match="object-based.*model_to_estimator.*load_weights"):
        estimator.train(_input_fn, steps=1)
    assert _checkpoints(model_dir) == before
    assert tf.train.latest_checkpoint(str(model_dir)).endswith("model.ckpt-3")


@pytest.mark.parametrize("call", ["evaluate", "predict"])
def test_evaluating_or_predicting_from_it_names_the_format_and_the_way_forward(tmp_path, call):
    model_dir = shutil.copytree(FIXTURE, tmp_path / "md")
    estimator = estimators.model_to_estimator(keras_model=_model(), model_dir=str(model_dir))
    with pytest.raises(ValueError, match="object-based.*model_to_estimator.*load_weights"):
        if call == "evaluate":
            estimator.evaluate(_input_fn, steps=1)
        else:
            next(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"dense_input": X}).batch(4)))


def test_the_way_the_error_names_evaluates_to_2_15s_loss(tmp_path):
    """2.15 evaluated this model_dir to loss 0.51168823 (make_215.py)."""
    model = _model()
    model.load_weights(tf.train.latest_checkpoint(FIXTURE)).expect_partial()
    estimator = estimators.model_to_estimator(keras_model=model, model_dir=str(tmp_path / "new"))
    assert estimator.evaluate(_input_fn, steps=1)["loss"] == pytest.approx(0.51168823, rel=1e-5)
