"""model_to_estimator: a compiled Keras 3 model trains, evaluates, predicts and exports as Keras itself would.

The reference is Keras: Model.fit on the same batches in the same order (shuffle=False), Model.evaluate
and Model.predict on the same weights. tf.estimator 2.15's checkpoint names and BatchNorm start are in
tests/reference/keras_model_to_estimator_215.json (make_keras_model_to_estimator_215.py).
"""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import Estimator, RunConfig, TPUEstimator
from estimators.export import PredictOutput
from estimators.keras.model import model_to_estimator, serving_input_receiver_fn

REFERENCE_215 = os.path.join(os.path.dirname(__file__), "reference", "keras_model_to_estimator_215.json")
BATCH = 16
STEPS = 4  # one pass over the 64 training rows


def data(n=64, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 4).astype("float32")
    return x, np.argmax(x[:, :3], axis=1).astype("int32")


def sequential(seed=1, **compile_args):
    """Dense-BatchNorm-Dense softmax classifier with an Input layer, named as Keras names a fresh session's."""
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([
        keras.Input((4,), name="x"),
        keras.layers.Dense(8, activation="relu", name="dense"),
        keras.layers.BatchNormalization(name="batch_normalization"),
        keras.layers.Dense(3, activation="softmax", name="dense_1"),
    ])
    model.compile(**(compile_args or {"optimizer": "sgd", "loss": "sparse_categorical_crossentropy",
                                      "metrics": ["accuracy"]}))
    return model


def copy_of(model):
    """An independent compiled copy with the same weights (fit would change the original)."""
    twin = keras.models.clone_model(model)
    twin.set_weights(model.get_weights())
    return twin


def checkpoint_weights(estimator, model):
    """The estimator's trained values of the Keras model's weights, by tf.estimator name (layer/weight)."""
    return [estimator.get_variable_value(f"{layer.name}/{w.name}") for layer in model.layers for w in layer.weights]


def train_input_fn(x, y, batch=BATCH):
    return lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(batch, drop_remainder=True)


def tpu_input_fn(x, y=None):
    def input_fn(params):
        return tf.data.Dataset.from_tensor_slices(x if y is None else (x, y)).batch(params["batch_size"])

    return input_fn


def batched(x, batch=8):
    return lambda: tf.data.Dataset.from_tensor_slices(x).batch(batch)


def assert_weights_equal(actual, expected, atol=1e-6):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=atol)


@pytest.fixture(scope="module")
def trained_sequential(tmp_path_factory):
    """(estimator, Keras model fitted the same way): string loss and optimizer, plain Estimator."""
    x, y = data()
    model = sequential()
    fitted = copy_of(model)
    fitted.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    estimator = model_to_estimator(model, model_dir=str(tmp_path_factory.mktemp("sequential")))
    estimator.train(train_input_fn(x, y), steps=STEPS)
    return estimator, fitted


def test_sequential_with_string_loss_and_optimizer_trains_as_model_fit(trained_sequential):
    estimator, fitted = trained_sequential
    assert isinstance(estimator, Estimator) and not isinstance(estimator, TPUEstimator)
    assert_weights_equal(checkpoint_weights(estimator, fitted), fitted.get_weights())


def test_evaluate_matches_keras_evaluate_on_the_same_weights(trained_sequential):
    estimator, fitted = trained_sequential
    x, y = data(40, seed=5)
    results = estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(16))
    expected = fitted.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    # the loss is 2.15's mean of the batches' losses (the 8-row last batch weighs as one); Keras weighs rows
    batch_losses = [fitted.evaluate(x[i:i + 16], y[i:i + 16], verbose=0, return_dict=True)["loss"]
                    for i in range(0, 40, 16)]
    assert set(results) == {"loss", "accuracy", "global_step"} and results["global_step"] == STEPS
    np.testing.assert_allclose([results["loss"], results["accuracy"]], [np.mean(batch_losses), expected["accuracy"]],
                               rtol=1e-5)


def test_predict_equals_model_predict_on_the_trained_weights(trained_sequential):
    estimator, fitted = trained_sequential
    x, _ = data(20, seed=3)
    predictions = list(estimator.predict(batched(x)))
    assert set(predictions[0]) == {"dense_1"}  # keyed by output name: a Sequential's last layer
    np.testing.assert_allclose(np.stack([p["dense_1"] for p in predictions]), fitted.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_export_serves_the_same_predictions_in_a_process_without_the_project(trained_sequential, tmp_path):
    estimator, fitted = trained_sequential
    x, _ = data(20, seed=3)
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), serving_input_receiver_fn(fitted)).decode()
    np.save(tmp_path / "x.npy", x)
    script = (
        "import sys, numpy as np, tensorflow as tf\n"
        "assert 'estimators' not in sys.modules\n"
        f"f = tf.saved_model.load({export_dir!r}).signatures['serving_default']\n"
        f"out = f(x=tf.constant(np.load({str(tmp_path / 'x.npy')!r})))\n"  # the Input layer's name
        f"np.save({str(tmp_path / 'served.npy')!r}, out['dense_1'].numpy())\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH="")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=str(tmp_path), env=env, timeout=300)
    np.testing.assert_allclose(np.load(tmp_path / "served.npy"), fitted.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def functional():
    """Two named inputs, two outputs (regression and 3-class), compiled with objects and loss weights."""
    keras.utils.set_random_seed(2)
    a, b = keras.Input((4,), name="a"), keras.Input((2,), name="b")
    hidden = keras.layers.Dense(6, activation="tanh", name="hidden")(keras.layers.concatenate([a, b]))
    value = keras.layers.Dense(1, name="value")(hidden)
    label = keras.layers.Dense(3, name="label")(hidden)
    model = keras.Model([a, b], [value, label])
    model.compile(optimizer=keras.optimizers.Adam(0.02),
                  loss=[keras.losses.MeanSquaredError(), keras.losses.SparseCategoricalCrossentropy(from_logits=True)],
                  loss_weights=[0.5, 1.0],
                  metrics=[[keras.metrics.MeanAbsoluteError()], [keras.metrics.SparseCategoricalAccuracy()]])
    return model


def functional_data(n=64, seed=0):
    x, y = data(n, seed)
    b = np.random.RandomState(seed + 1).randn(n, 2).astype("float32")
    value = (x[:, :1] + b[:, :1]).astype("float32")
    return {"a": x, "b": b}, {"value": value, "label": y}


def test_functional_model_with_objects_trains_evaluates_and_predicts_as_keras(tmp_path):
    features, labels = functional_data()
    model = functional()
    fitted = copy_of(model)
    fitted.compile(**keras.saving.deserialize_keras_object(model.get_compile_config()))
    fitted.fit([features["a"], features["b"]], [labels["value"], labels["label"]], batch_size=BATCH, epochs=1,
               shuffle=False, verbose=0)
    estimator = model_to_estimator(model, model_dir=str(tmp_path), train_batch_size=BATCH, eval_batch_size=BATCH,
                                   predict_batch_size=BATCH)
    assert isinstance(estimator, TPUEstimator)

    def input_fn(params):  # features and labels keyed by the model's input and output names
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(params["batch_size"], drop_remainder=True)

    estimator.train(input_fn, steps=STEPS)
    assert_weights_equal(checkpoint_weights(estimator, fitted), fitted.get_weights())

    x, y = functional_data(40, seed=7)
    results = estimator.evaluate(tpu_input_fn(x, y))
    expected = fitted.evaluate([x["a"], x["b"]], [y["value"], y["label"]], batch_size=BATCH, verbose=0,
                               return_dict=True)
    assert set(results) == {"loss", "value_mean_absolute_error", "label_sparse_categorical_accuracy", "global_step"}
    for key in ("value_mean_absolute_error", "label_sparse_categorical_accuracy"):
        np.testing.assert_allclose(results[key], expected[key], rtol=1e-5, err_msg=key)
    # the loss is 2.15's mean of the batches' losses off the TPU (the 8-row last batch weighs as one); Keras weighs rows
    batch_losses = [fitted.evaluate([x["a"][i:i + BATCH], x["b"][i:i + BATCH]], [y["value"][i:i + BATCH],
                                    y["label"][i:i + BATCH]], verbose=0, return_dict=True)["loss"]
                    for i in range(0, 40, BATCH)]
    np.testing.assert_allclose(results["loss"], np.mean(batch_losses), rtol=1e-5)

    predictions = list(estimator.predict(tpu_input_fn(x)))
    value, label = fitted.predict([x["a"], x["b"]], verbose=0)
    np.testing.assert_allclose(np.stack([p["value"] for p in predictions]), value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.stack([p["label"] for p in predictions]), label, rtol=1e-5, atol=1e-6)


def regularized(seed=3):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu", kernel_regularizer="l2"),
                              keras.layers.Dense(3)])
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_one_and_eight_replicas_take_the_same_steps_as_model_fit(eight_replicas, tmp_path):
    x, y = data()
    model = regularized()
    fitted = copy_of(model)
    fitted.compile(optimizer=keras.optimizers.Adam(0.01),
                   loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    fitted.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    trained = {}
    for replicas, strategy in ((1, None), (8, eight_replicas)):
        estimator = model_to_estimator(model, model_dir=str(tmp_path / str(replicas)), train_batch_size=BATCH,
                                       eval_batch_size=BATCH, config=RunConfig(train_distribute=strategy))
        estimator.train(lambda params: tf.data.Dataset.from_tensor_slices((x, y)).batch(params["batch_size"],
                                                                                        drop_remainder=True),
                        steps=STEPS)
        trained[replicas] = (checkpoint_weights(estimator, fitted), estimator.evaluate(tpu_input_fn(x, y))["loss"])
    assert_weights_equal(trained[8][0], trained[1][0], atol=1e-5)
    assert_weights_equal(trained[1][0], fitted.get_weights())
    np.testing.assert_allclose(trained[8][1], trained[1][1], rtol=1e-5)
    np.testing.assert_allclose(trained[1][1], fitted.evaluate(x, y, verbose=0), rtol=1e-5)


def test_sample_weights_in_features_weigh_the_loss_as_in_model_fit(tmp_path):
    x, y = data()
    weights = np.linspace(0.0, 2.0, len(x)).astype("float32")
    model = sequential(optimizer=keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
    fitted = copy_of(model)
    fitted.compile(optimizer=keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
    fitted.fit(x, y, sample_weight=weights, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(train_input_fn({"features": x, "sample_weights": weights}, y), steps=STEPS)
    assert_weights_equal(checkpoint_weights(estimator, fitted), fitted.get_weights())


def per_example_squared_error(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def whole_batch_squared_error(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred))


def regression(loss):
    keras.utils.set_random_seed(5)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="out")])
    model.compile(keras.optimizers.SGD(0.1), loss)
    return model


CUSTOM = {"per_example_squared_error": per_example_squared_error,
          "whole_batch_squared_error": whole_batch_squared_error}


def test_a_custom_per_example_loss_function_trains_as_model_fit(tmp_path):
    x, _ = data()
    y = x[:, :2] * 2.0
    model = regression(per_example_squared_error)
    with keras.saving.custom_object_scope(CUSTOM):  # clone_model compiles the copy from its config
        fitted = copy_of(model)
    fitted.compile(keras.optimizers.SGD(0.1), per_example_squared_error)
    fitted.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    estimator = model_to_estimator(model, model_dir=str(tmp_path), custom_objects=CUSTOM)
    estimator.train(train_input_fn(x, y), steps=STEPS)
    assert_weights_equal(checkpoint_weights(estimator, fitted), fitted.get_weights())


def test_a_custom_loss_returning_one_value_per_batch_is_refused(tmp_path):
    """Keras would divide it by the replica count on 8 cores but not on one: a silent 8x larger step."""
    x, _ = data(16)
    estimator = model_to_estimator(regression(whole_batch_squared_error), model_dir=str(tmp_path),
                                   custom_objects=CUSTOM)
    with pytest.raises(ValueError, match="returns one value for the whole batch, not one per example"):
        estimator.train(train_input_fn(x, x[:, :2]), steps=1)


def test_a_custom_loss_missing_from_custom_objects_is_named_at_conversion():
    with pytest.raises(ValueError, match=r"custom_objects=\{'name': object\}"):
        model_to_estimator(regression(per_example_squared_error))


def test_an_uncompiled_model_is_refused():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    with pytest.raises(ValueError, match=r"compile\(\) it with a loss and an optimizer"):
        model_to_estimator(model)


def test_a_model_compiled_without_a_loss_is_refused():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.compile(optimizer="adam")
    with pytest.raises(ValueError, match=r"compile\(\) it with a loss and an optimizer"):
        model_to_estimator(model)


def test_estimator_type_follows_batch_sizes_and_use_tpu(tmp_path):
    model = sequential()
    assert type(model_to_estimator(model, model_dir=str(tmp_path / "a"))) is Estimator
    assert type(model_to_estimator(model, model_dir=str(tmp_path / "b"), predict_batch_size=8)) is TPUEstimator
    with pytest.raises(ValueError, match="use_tpu=True needs train_batch_size"):
        model_to_estimator(model, use_tpu=True)


def batchnorm_model():
    keras.utils.set_random_seed(4)
    model = keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization(name="bn"),
                              keras.layers.Dense(2, name="out")])
    model.compile(keras.optimizers.SGD(0.0), "sparse_categorical_crossentropy")
    model.layers[0].moving_mean.assign([1.0, 2.0, 3.0])
    model.layers[0].moving_variance.assign([4.0, 5.0, 6.0])
    return model


def test_untrained_estimator_predicts_with_the_keras_models_weights_and_statistics(tmp_path):
    model = batchnorm_model()
    x = np.random.RandomState(0).randn(8, 3).astype("float32")
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    predictions = np.stack([p["out"] for p in estimator.predict(batched(x))])
    np.testing.assert_allclose(predictions, model.predict(x, verbose=0), rtol=1e-6)


def test_batchnorm_statistics_start_from_the_keras_model_where_215_reset_them(tmp_path):
    """A deliberate difference: 2.15 warm-started trainable variables only, so moving statistics began at 0/1."""
    estimator = model_to_estimator(batchnorm_model(), model_dir=str(tmp_path))
    estimator.train(train_input_fn(np.ones((4, 3), np.float32), np.zeros(4, np.int32), batch=4), steps=1)
    momentum = 0.99  # one step on a batch of ones: mean 1, variance 0
    np.testing.assert_allclose(estimator.get_variable_value("bn/moving_mean"),
                               momentum * np.array([1.0, 2.0, 3.0]) + (1 - momentum) * 1.0, rtol=1e-6)
    np.testing.assert_allclose(estimator.get_variable_value("bn/moving_variance"),
                               momentum * np.array([4.0, 5.0, 6.0]), rtol=1e-6)
    with open(REFERENCE_215) as f:
        ref = json.load(f)["batchnorm_statistics_after_one_step"]
    np.testing.assert_allclose(ref["moving_mean"], [1 - momentum] * 3, rtol=1e-6)  # 2.15 started from 0 ...
    np.testing.assert_allclose(ref["moving_variance"], [momentum] * 3, rtol=1e-6)  # ... and 1


def test_a_checkpoint_in_model_dir_takes_precedence_over_the_keras_weights(trained_sequential, tmp_path):
    estimator, fitted = trained_sequential
    other = sequential(seed=9)  # same architecture, other weights
    resumed = model_to_estimator(other, model_dir=estimator.model_dir)
    x, _ = data(8, seed=3)
    predictions = np.stack([p["dense_1"] for p in resumed.predict(batched(x))])
    np.testing.assert_allclose(predictions, fitted.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def nested_functional():
    inputs = keras.Input((3,), name="a")
    inner = keras.Sequential([keras.layers.Dense(3, name="inner")], name="sub")
    outputs = keras.layers.Dense(2, name="head")(inner(keras.layers.Dense(4, name="h")(inputs)))
    model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.SGD(0.1, momentum=0.9), "sparse_categorical_crossentropy")
    return model


def built_by_fit():
    model = keras.Sequential([keras.layers.Dense(4, name="first"), keras.layers.Dense(2, name="second")])
    model.compile("sgd", "sparse_categorical_crossentropy")
    model.fit(np.ones((4, 3), np.float32), np.zeros(4, np.int32), verbose=0)  # built without an Input layer
    return model


def with_batchnorm():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="dense"),
                              keras.layers.BatchNormalization(name="batch_normalization"),
                              keras.layers.Dense(2, name="dense_1")])
    model.compile(keras.optimizers.Adam(0.01), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


@pytest.mark.parametrize("name, build, features", [
    ("sequential_input_batchnorm_adam", with_batchnorm, None),
    ("sequential_built_by_fit_sgd", built_by_fit, None),
    ("functional_nested_momentum", nested_functional, "a"),
])
def test_model_weights_are_checkpointed_under_the_names_215_gave_them(name, build, features, tmp_path):
    x = np.ones((4, 3), np.float32)
    estimator = model_to_estimator(build(), model_dir=str(tmp_path), checkpoint_format="saver")  # the reference's
    estimator.train(train_input_fn({features: x} if features else x, np.zeros(4, np.int32), batch=4), steps=1)
    with open(REFERENCE_215) as f:
        reference = json.load(f)[name]
    model_weights = {n: s for n, s in reference.items() if not n.startswith("training/")}  # 2.15's optimizer state
    ours = {n: list(np.shape(estimator.get_variable_value(n))) for n in estimator.get_variable_names()}
    assert {n: s for n, s in ours.items() if n in model_weights} == model_weights


def test_missing_feature_key_names_the_models_inputs(tmp_path):
    features, labels = functional_data()
    estimator = model_to_estimator(functional(), model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"Missed keys: \['b'\]"):
        estimator.train(train_input_fn({"a": features["a"]}, labels), steps=1)


def test_metric_names_map_renames_every_compiled_metric(trained_sequential):
    estimator, _ = trained_sequential
    x, y = data(16, seed=5)
    renamed = model_to_estimator(sequential(), model_dir=estimator.model_dir, metric_names_map={"accuracy": "acc"})
    results = renamed.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(16))
    assert set(results) == {"acc", "loss", "global_step"}
    wrong = model_to_estimator(sequential(), model_dir=estimator.model_dir, metric_names_map={"acuracy": "acc"})
    with pytest.raises(ValueError, match=r"metric names \['accuracy'\] do not exist"):
        wrong.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(16))


def test_export_outputs_add_a_signature_per_named_output(trained_sequential, tmp_path):
    estimator, fitted = trained_sequential
    classified = model_to_estimator(fitted, model_dir=estimator.model_dir,
                                    export_outputs={"dense_1": PredictOutput})
    export_dir = classified.export_saved_model(str(tmp_path), serving_input_receiver_fn(fitted)).decode()
    signatures = tf.saved_model.load(export_dir).signatures
    assert set(signatures) == {"serving_default", "dense_1"}
    x, _ = data(5, seed=3)
    np.testing.assert_allclose(signatures["dense_1"](x=tf.constant(x))["output"], fitted.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="not among the Keras model's output names"):
        model_to_estimator(fitted, export_outputs={"logits": PredictOutput})


def test_a_saved_keras_model_file_converts_like_the_model(tmp_path):
    model = sequential(seed=6)
    model.save(tmp_path / "model.keras")
    x, _ = data(8, seed=3)
    estimator = model_to_estimator(keras_model_path=str(tmp_path / "model.keras"), model_dir=str(tmp_path / "dir"))
    predictions = np.stack([p["dense_1"] for p in estimator.predict(batched(x))])
    np.testing.assert_allclose(predictions, model.predict(x, verbose=0), rtol=1e-6)


def test_seed_article_fashion_mnist_cnn_trains_and_evaluates_as_keras(tmp_path):
    """The 2018 article's flow: its CNN compiled with Adam and sparse categorical crossentropy, a few steps."""
    from input_fns import idx
    from model_fns.cnn import build_cnn

    folder = "/usr/share/datasets/fashion-mnist"
    images = idx.read_images(os.path.join(folder, "t10k-images-idx3-ubyte.gz"))[:160, :, :, None] / np.float32(255)
    labels = idx.read_labels(os.path.join(folder, "t10k-labels-idx1-ubyte.gz"))[:160].astype("int32")
    keras.utils.set_random_seed(0)
    model = build_cnn()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    estimator = model_to_estimator(model, model_dir=str(tmp_path), use_tpu=False, train_batch_size=32,
                                   eval_batch_size=32)
    estimator.train(lambda params: tf.data.Dataset.from_tensor_slices((images[:96], labels[:96])).batch(
        params["batch_size"], drop_remainder=True), max_steps=3)
    results = estimator.evaluate(tpu_input_fn(images[96:], labels[96:]))
    for layer in model.layers:  # the trained weights into the Keras model, to evaluate it with Keras
        for weight in layer.weights:
            weight.assign(estimator.get_variable_value(f"{layer.name}/{weight.name}"))
    expected = model.evaluate(images[96:], labels[96:], batch_size=32, verbose=0, return_dict=True)
    assert results["global_step"] == 3
    np.testing.assert_allclose([results["loss"], results["accuracy"]], [expected["loss"], expected["accuracy"]],
                               rtol=1e-4)


# -- Keras 2 (tf_keras) models, and Keras 2's input names -------------------------------------------------------------
# tests/reference/keras2_model_to_estimator_215.json holds what 2.15's model_to_estimator computed for Keras 2
# Sequentials built with input_shape (input named dense_input), with these seeded weights and data
# (make_keras2_model_to_estimator_215.py).
REFERENCE_KERAS2_215 = os.path.join(os.path.dirname(__file__), "reference", "keras2_model_to_estimator_215.json")
KERAS2_BATCH, KERAS2_STEPS = 4, 4


@pytest.fixture(scope="module")
def tf_keras():
    return pytest.importorskip("tf_keras")


def keras2_reference(name):
    with open(REFERENCE_KERAS2_215) as f:
        return json.load(f)[name]


def keras2_data():
    rng = np.random.RandomState(7)
    x = rng.randn(16, 4).astype("float32")
    return x, (x[:, 0] + x[:, 1] > 0).astype("int32")


def keras2_initial_weights(shapes):
    rng = np.random.RandomState(11)
    return [(rng.randn(*shape) * 0.5).astype("float32") for shape in shapes]


def input_shape_sequential(k, optimizer, l2=None):
    """`Sequential([Dense(3, input_shape=(4,)), Dense(2)])` in Keras `k` (tf_keras or Keras 3), 2.15's weights."""
    if k is keras:
        keras.utils.set_random_seed(0)
    else:
        k.backend.clear_session()  # Keras 2 counts layer names per session: dense, dense_1, input dense_input
    regularizer = k.regularizers.l2(l2) if l2 else None
    model = k.Sequential([k.layers.Dense(3, activation="relu", input_shape=(4,), kernel_regularizer=regularizer,
                                         name="dense"), k.layers.Dense(2, name="dense_1")])
    model.set_weights(keras2_initial_weights([w.shape for w in model.get_weights()]))
    model.compile(optimizer, k.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def train_evaluate_predict_keyed_by_dense_input(model, model_dir):
    x, y = keras2_data()
    estimator = model_to_estimator(model, model_dir=model_dir)
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(KERAS2_BATCH),
                    steps=KERAS2_STEPS)
    results = estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(8))
    predictions = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"dense_input": x[:5]}).batch(5)))
    return estimator, results, predictions


def assert_as_215(name, estimator, results, predictions, atol=1e-5):
    reference = keras2_reference(name)
    for variable, value in reference["model_variables"].items():
        np.testing.assert_allclose(estimator.get_variable_value(variable), value, rtol=1e-5, atol=atol,
                                   err_msg=variable)
    assert results["global_step"] == KERAS2_STEPS
    for key in ("loss", "accuracy"):
        np.testing.assert_allclose(results[key], reference["evaluate"][key], rtol=1e-5, err_msg=key)
    assert sorted(predictions[0]) == reference["prediction_keys"] == ["dense_1"]
    np.testing.assert_allclose(np.stack([p["dense_1"] for p in predictions]), reference["predictions"], rtol=1e-5,
                               atol=atol)


@pytest.mark.parametrize("name, make_optimizer, l2", [
    ("sequential_input_shape_sgd_l2", lambda k: k.optimizers.SGD(0.1), 0.01),
    ("sequential_input_shape_adam", lambda k: k.optimizers.Adam(0.05), None),
], ids=["sgd_l2", "adam"])
def test_a_tf_keras_model_keyed_by_its_keras2_input_name_trains_evaluates_and_predicts_as_215(
        tf_keras, name, make_optimizer, l2, tmp_path):
    model = input_shape_sequential(tf_keras, make_optimizer(tf_keras), l2)
    assert model.input_names == keras2_reference(name)["input_names"] == ["dense_input"]
    assert_as_215(name, *train_evaluate_predict_keyed_by_dense_input(model, str(tmp_path)))


def test_a_tf_keras_model_with_a_legacy_optimizer_trains_as_215(tf_keras, tmp_path):
    model = input_shape_sequential(tf_keras, tf_keras.optimizers.legacy.SGD(0.1), l2=0.01)
    assert_as_215("sequential_input_shape_sgd_l2", *train_evaluate_predict_keyed_by_dense_input(model, str(tmp_path)))


def test_a_tf_keras_model_compiled_with_a_tf_compat_v1_optimizer_trains_as_215(tf_keras, tmp_path):
    model = input_shape_sequential(tf_keras, tf.compat.v1.train.GradientDescentOptimizer(0.1), l2=0.01)
    assert_as_215("sequential_input_shape_sgd_l2", *train_evaluate_predict_keyed_by_dense_input(model, str(tmp_path)))


def test_a_keras3_sequential_built_with_input_shape_takes_keras2s_input_name_as_215_did(tmp_path):
    model = input_shape_sequential(keras, keras.optimizers.SGD(0.1), l2=0.01)
    assert model.inputs[0]._keras_history.operation.name.startswith("input_layer")  # Keras 3's own name
    assert_as_215("sequential_input_shape_sgd_l2", *train_evaluate_predict_keyed_by_dense_input(model, str(tmp_path)))


def test_a_keras3_sequential_built_by_fit_takes_its_first_layers_keras2_input_name(tmp_path):
    model = built_by_fit()
    x = np.ones((4, 3), np.float32)
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(train_input_fn({"first_input": x}, np.zeros(4, np.int32), batch=4), steps=1)
    assert estimator.get_variable_value("global_step") == 1


def test_a_tf_keras_model_takes_the_same_steps_on_one_and_eight_replicas(tf_keras, eight_replicas, tmp_path):
    x, y = keras2_data()
    trained = {}
    for replicas, strategy in ((1, None), (8, eight_replicas)):
        model = input_shape_sequential(tf_keras, tf_keras.optimizers.Adam(0.05), l2=0.01)
        estimator = model_to_estimator(model, model_dir=str(tmp_path / str(replicas)), train_batch_size=8,
                                       config=RunConfig(train_distribute=strategy))
        estimator.train(lambda params: tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(
            params["batch_size"], drop_remainder=True), steps=2)
        trained[replicas] = [estimator.get_variable_value(n) for n in ("dense/kernel", "dense/bias", "dense_1/kernel")]
    assert_weights_equal(trained[8], trained[1], atol=1e-5)


def test_an_uncompiled_tf_keras_model_is_refused(tf_keras):
    model = tf_keras.Sequential([tf_keras.layers.Dense(3, input_shape=(4,))])
    with pytest.raises(ValueError, match=r"compile\(\) it with a loss and an optimizer"):
        model_to_estimator(model)


def test_a_tf_keras_model_exports_a_signature_named_by_its_input(tf_keras, tmp_path):
    model = input_shape_sequential(tf_keras, tf_keras.optimizers.SGD(0.1))
    estimator, _, predictions = train_evaluate_predict_keyed_by_dense_input(model, str(tmp_path / "dir"))
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), serving_input_receiver_fn(model)).decode()
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    served = serve(dense_input=tf.constant(keras2_data()[0][:5]))
    np.testing.assert_allclose(served["dense_1"], np.stack([p["dense_1"] for p in predictions]), rtol=1e-6)


def test_something_that_is_no_keras_model_is_refused():
    with pytest.raises(ValueError, match=r"keras.Model \(Keras 3\) or a tf_keras.Model \(Keras 2\)"):
        model_to_estimator(object())


def test_a_tf_keras_functional_model_with_two_outputs_trains_and_evaluates_as_its_own_fit(tf_keras, tmp_path):
    k = tf_keras

    def compiled(model):
        model.compile(k.optimizers.Adam(0.02), loss=[k.losses.MeanSquaredError(),
                                                     k.losses.SparseCategoricalCrossentropy(from_logits=True)],
                      loss_weights=[0.5, 1.0],
                      metrics=[[k.metrics.MeanAbsoluteError()], [k.metrics.SparseCategoricalAccuracy()]])
        return model

    k.backend.clear_session()
    a, b = k.Input((4,), name="a"), k.Input((2,), name="b")
    hidden = k.layers.Dense(6, activation="tanh", name="hidden")(k.layers.concatenate([a, b]))
    outputs = [k.layers.Dense(1, name="value")(hidden), k.layers.Dense(3, name="label")(hidden)]
    model = compiled(k.Model([a, b], outputs))
    fitted = k.models.clone_model(model)
    fitted.set_weights(model.get_weights())
    features, labels = functional_data(32)
    compiled(fitted).fit([features["a"], features["b"]], [labels["value"], labels["label"]], batch_size=8, epochs=1,
                         shuffle=False, verbose=0)
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(train_input_fn(features, labels, batch=8), steps=4)
    assert_weights_equal([estimator.get_variable_value(f"{layer.name}/{w.name.split('/')[-1].split(':')[0]}")
                          for layer in fitted.layers for w in layer.weights], fitted.get_weights())
    results = estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(8))
    expected = fitted.evaluate([features["a"], features["b"]], [labels["value"], labels["label"]], batch_size=8,
                               verbose=0, return_dict=True)
    assert set(results) == {"loss", "value_mean_absolute_error", "label_sparse_categorical_accuracy", "global_step"}
    for key in ("loss", "value_mean_absolute_error", "label_sparse_categorical_accuracy"):
        np.testing.assert_allclose(results[key], expected[key], rtol=1e-5, err_msg=key)
