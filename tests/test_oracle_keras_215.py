"""model_to_estimator as tensorflow_estimator 2.15's own keras tests saw it (keras_test, keras_premade_model_test).

Each test checks one behaviour of 2.15 with a tf_keras (Keras 2) model, the Keras of 2.15's programs; the values
were read off the real 2.15 (tensorflow 2.15.1, tensorflow-estimator 2.15.0) running the same model.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from estimators.keras.model import model_to_estimator
from tests import tiers

tf_keras = pytest.importorskip("tf_keras", reason=tiers.missing_package({"needs_tf_keras"}))


def data():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 4).astype("float32")
    return x, np.eye(3, dtype="float32")[np.argmax(x[:, :3], axis=1)]


def input_fn():
    x, y = data()
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(16)


def dense_sequential(optimizer="sgd", **compile_args):
    """`Sequential([Dense(3, input_shape=(4,), name="dense")])`: its input is `dense_input`, as in 2.15."""
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(1)
    model = tf_keras.Sequential([tf_keras.layers.Dense(3, activation="softmax", input_shape=(4,), name="dense")])
    model.compile(optimizer, "categorical_crossentropy", **compile_args)
    return model


class VariableHook(tf.compat.v1.train.SessionRunHook):
    """keras_test.py's MyHook: a SessionRunHook making a TF1 variable (so the estimator runs sessions)."""

    def begin(self):
        tf.compat.v1.get_variable("temp", [1])


def test_compiled_metrics_are_evaluated_on_the_graph_path(tmp_path):
    """2.15 turned the Keras metric objects of its model_fn into (result, update_op) pairs on its session path:
    after training with a SessionRunHook, evaluate() reported `accuracy` (the accuracy of the estimator's own
    predictions), `loss` and `global_step`."""
    model = dense_sequential(tf.compat.v1.train.RMSPropOptimizer(1e-3), metrics=["accuracy"])
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(input_fn, steps=4, hooks=[VariableHook()])
    results = estimator.evaluate(input_fn, steps=2)
    assert sorted(results) == ["accuracy", "global_step", "loss"]
    assert results["global_step"] == 4
    x, y = data()
    predictions = np.stack([p["dense"] for p in estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(
        x[:32]).batch(16))])
    np.testing.assert_allclose(results["accuracy"], np.mean(np.argmax(predictions, 1) == np.argmax(y[:32], 1)))


def test_the_keras_weights_are_written_to_model_dir_keras_and_warm_started_from(tmp_path):
    """2.15 wrote the Keras model's weights and global_step to model_dir/keras/keras_model.ckpt (name-based for
    checkpoint_format='saver') and warm-started the estimator from it, with vars_to_warm_start='.*'."""
    model = dense_sequential()
    estimator = model_to_estimator(model, model_dir=str(tmp_path), checkpoint_format="saver")
    path = os.path.join(str(tmp_path), "keras", "keras_model.ckpt")
    assert estimator._warm_start_settings.ckpt_to_initialize_from == path
    assert estimator._warm_start_settings.vars_to_warm_start == ".*"
    assert {name for name, _ in tf.train.list_variables(path)} >= {"dense/bias", "dense/kernel", "global_step"}
    assert tf.train.load_variable(path, "global_step") == 0
    np.testing.assert_allclose(tf.train.load_variable(path, "dense/kernel"), model.layers[0].kernel.numpy())
    assert estimator.latest_checkpoint() is None  # model_dir itself has no checkpoint yet


def test_an_untrained_estimator_exports_the_keras_weights(tmp_path):
    """keras_test.py's test_export_keras_estimator: 2.15 exported right after model_to_estimator, without
    training, from the model_dir/keras checkpoint: the SavedModel served the Keras model's predictions."""
    from estimators.export import build_raw_serving_input_receiver_fn

    model = dense_sequential()
    x, _ = data()
    expected = model.predict(x[:5], verbose=0)
    estimator = model_to_estimator(model, model_dir=str(tmp_path / "model"), checkpoint_format="saver")
    receiver = build_raw_serving_input_receiver_fn({"dense_input": tf.TensorSpec([None, 4], tf.float32)})
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver).decode()
    served = tf.saved_model.load(export_dir).signatures["serving_default"](dense_input=tf.constant(x[:5]))
    np.testing.assert_allclose(served["dense"], expected, rtol=1e-5)


def test_in_a_tf1_graph_the_keras_session_gets_the_session_config(tmp_path):
    """keras_test.py's test_gpu_config: converting a model built in a tf.Graph whose weights no session had
    initialised, 2.15 gave Keras's backend session the config's session_config (its GPUOptions)."""
    from tf_keras.src.backend import get_session

    from estimators import RunConfig

    try:
        with tf.Graph().as_default():
            model = tf_keras.Sequential([tf_keras.layers.Dense(3, input_shape=(4,), name="dense")])
            model.compile("rmsprop", "categorical_crossentropy", metrics=["mse"])
            config = RunConfig(model_dir=str(tmp_path))
            config._session_config = tf.compat.v1.ConfigProto(
                gpu_options=tf.compat.v1.GPUOptions(per_process_gpu_memory_fraction=0.3))
            model_to_estimator(model, config=config)
            assert get_session()._config.gpu_options.per_process_gpu_memory_fraction == pytest.approx(0.3)
    finally:
        tf_keras.backend.clear_session()


def wide_deep():
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(1)
    linear = tf_keras.experimental.LinearModel(units=1, name="Linear")
    dnn = tf_keras.Sequential([tf_keras.layers.Dense(1, name="DNNDense")])
    model = tf_keras.experimental.WideDeepModel(linear, dnn)
    model.compile([tf_keras.optimizers.legacy.SGD(0.1), tf_keras.optimizers.legacy.Adam(0.1)], "mse", ["mse"])
    return model


def regression_input_fn():
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (64, 2)).astype("float32")
    y = (0.3 * x[:, :1] + 0.2 * x[:, 1:]).astype("float32")
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16)


def test_a_wide_deep_model_trains_each_part_with_its_own_optimizer(tmp_path):
    """keras_premade_model_test.py: 2.15 took a WideDeepModel compiled with [linear optimizer, dnn optimizer],
    and trained its linear part with the first and its dnn part with the second (Adam's slots only on DNNDense).
    Deliberately unlike 2.15, the global step counts steps: 2.15 tied both optimizers' iteration counters to it,
    so train(steps=10) left it at 12 and Adam's bias correction read the shared count."""
    estimator = model_to_estimator(wide_deep(), model_dir=str(tmp_path), checkpoint_format="saver")
    before = estimator.evaluate(regression_input_fn, steps=1)["loss"]
    estimator.train(regression_input_fn, steps=10)
    assert estimator.get_variable_value("global_step") == 10
    assert estimator.evaluate(regression_input_fn, steps=1)["loss"] < before
    names = estimator.get_variable_names()
    assert any("Adam" in name and "DNNDense" in name for name in names)  # 2.15: training/Adam/.../DNNDense/kernel/m
    assert not any("Adam" in name and "Linear" in name for name in names)


def test_a_fitted_subclassed_linear_model_converts_and_starts_fresh(tmp_path):
    """keras_premade_model_test.py's test_train_premade_linear_model: 2.15 converted a fitted LinearModel (a
    subclassed model), warned that its weights could not be carried, and trained it from fresh weights."""
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (64, 2)).astype("float32")
    y = (0.3 * x[:, 0] + 0.2 * x[:, 1]).astype("float32")
    tf_keras.utils.set_random_seed(1)
    model = tf_keras.experimental.LinearModel(units=1)
    model.compile(tf_keras.optimizers.legacy.SGD(0.1), "mse", ["mse"])
    model.fit(x, y, epochs=2, verbose=0)
    estimator = model_to_estimator(model, model_dir=str(tmp_path), checkpoint_format="saver")
    assert estimator._warm_start_settings is None
    results = estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(64), steps=1)
    assert sorted(results) == ["global_step", "loss", "mse"]
