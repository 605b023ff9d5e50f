"""A Keras 3 model_to_estimator trained on the TF2 path evaluates on the graph path (a session hook asks for it).

Keras 3's compile() makes a loss tracker (loss/total, loss/count) in every model_fn call; in a TF1 graph those
were global variables, so the graph path's Saver looked for them in the TF2 path's checkpoint and evaluation
failed ("Key loss/total not found"). They are evaluation state, local to the session, as 2.15's metrics were.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import model_to_estimator


class _SessionHook(tf.compat.v1.train.SessionRunHook):
    """Any tf.compat.v1 session hook: the call then runs on the graph path."""


def _input_fn():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    return tf.data.Dataset.from_tensors(({"x": x}, np.ones((2, 1), np.float32))).repeat()


@pytest.mark.parametrize("checkpoint_format", ["saver", "checkpoint"])
def test_graph_path_evaluation_of_a_tf2_path_checkpoint_gives_the_same_loss(tmp_path, checkpoint_format):
    model = keras.Sequential([keras.Input((3,), name="x"), keras.layers.Dense(1, name="dense")])
    model.compile("sgd", "mse")
    estimator = model_to_estimator(keras_model=model, model_dir=str(tmp_path), checkpoint_format=checkpoint_format)
    estimator.train(_input_fn, steps=2)
    on_tf2 = estimator.evaluate(_input_fn, steps=1)
    on_graph = estimator.evaluate(_input_fn, steps=1, hooks=[_SessionHook()])
    assert on_graph["global_step"] == on_tf2["global_step"] == 2
    np.testing.assert_allclose(on_graph["loss"], on_tf2["loss"], rtol=1e-5)
