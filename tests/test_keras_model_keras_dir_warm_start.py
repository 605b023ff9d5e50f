"""model_to_estimator starts from the latest checkpoint in model_dir/keras when there is one, as 2.15 did.

A tf_keras (Keras 2) model, whose save_weights writes the TensorFlow checkpoint 2.15's programs put there.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from estimators.keras.model import model_to_estimator
from tests import tiers

keras = pytest.importorskip("tf_keras", reason=tiers.missing_package({"needs_tf_keras"}))  # Keras 2


def _model(seed):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,), name="x"), keras.layers.Dense(2, name="dense")], name="seq")
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_a_checkpoint_in_model_dir_keras_is_where_the_estimator_starts(tmp_path):
    saved, other = _model(1), _model(2)
    path = os.path.join(tmp_path, "keras", "warm_start.ckpt")
    saved.save_weights(path)
    estimator = model_to_estimator(other, model_dir=str(tmp_path))
    assert estimator._warm_start_settings.ckpt_to_initialize_from == path
    x = np.random.RandomState(0).randn(4, 3).astype("float32")
    predictions = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(4)))
    np.testing.assert_allclose(np.stack([p["dense"] for p in predictions]), saved.predict(x, verbose=0), rtol=1e-5)
