"""model_to_estimator's train step advances the global step itself, so the graph path's step count stops it.

A tf_keras (Keras 2) model on the graph path (tf.Graph and sessions, as 2.15 trained), on an endless input.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimators import RunConfig
from estimators.keras.model import model_to_estimator
from tests import tiers

keras = pytest.importorskip("tf_keras", reason=tiers.missing_package({"needs_tf_keras"}))  # Keras 2


def test_graph_path_training_stops_after_steps_on_an_endless_input(tmp_path):
    model = keras.Sequential([keras.Input((3,), name="x"), keras.layers.Dense(1, name="dense")], name="seq")
    model.compile(optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.1), loss="mse")
    x = np.random.RandomState(0).randn(8, 3).astype("float32")
    estimator = model_to_estimator(model, config=RunConfig(model_dir=str(tmp_path), execution="graph"))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, x[:, :1])).repeat().batch(4), steps=3)
    assert estimator.get_variable_value("global_step") == 3
