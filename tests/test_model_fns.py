"""model_fns: the registry, the article's CNN and CIFAR ResNet v1, and their training through TPUEstimator."""

from __future__ import annotations

import glob
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import input_fns
import model_fns
from estimators import ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from input_fns import synthetic
from model_fns import cnn, common, registry, resnet

BATCH = 16
TRAIN_STEPS = 20
CNN_SHAPE = (28, 28, 1)
RESNET_SHAPE = (32, 32, 3)


# -- registry -----------------------------------------------------------------------------------
def test_registry_has_cnn_and_resnet_with_their_defaults():
    assert model_fns.model_names() == ["cnn", "resnet"]
    cnn_info, resnet_info = model_fns.get_model("cnn"), model_fns.get_model("resnet")
    assert (cnn_info.name, cnn_info.model_fn, cnn_info.default_dataset) == ("cnn", cnn.model_fn, "fashion_mnist")
    assert cnn_info.image_shape == CNN_SHAPE and cnn_info.default_params["learning_rate"] == 1e-3
    assert (resnet_info.model_fn, resnet_info.default_dataset) == (resnet.model_fn, "cifar10")
    assert resnet_info.image_shape == RESNET_SHAPE
    assert resnet_info.default_params["learning_rate"] == 0.1
    assert resnet_info.default_params["resnet_depth"] == 20
    assert resnet_info.default_params["lr_schedule"] == "step"


def test_get_model_hands_out_a_copy_of_default_params():
    model_fns.get_model("cnn").default_params["learning_rate"] = 5.0
    assert model_fns.get_model("cnn").default_params["learning_rate"] == 1e-3


def test_unknown_model_lists_the_choices():
    with pytest.raises(ValueError, match=r"'vgg'.*\['cnn', 'resnet'\]"):
        model_fns.get_model("vgg")


def test_a_name_registers_once(monkeypatch):
    monkeypatch.setattr(registry, "_MODELS", dict(registry._MODELS))
    with pytest.raises(ValueError, match="already registered"):
        model_fns.register("cnn", "fashion_mnist", {}, image_shape=CNN_SHAPE)(cnn.model_fn)


# -- cnn structure ------------------------------------------------------------------------------
def _layer_summary(layer: keras.layers.Layer) -> tuple:
    config = layer.get_config()
    if isinstance(layer, keras.layers.Conv2D):
        return ("Conv2D", config["filters"], config["kernel_size"], config["padding"], config["activation"])
    if isinstance(layer, keras.layers.MaxPooling2D):
        return ("MaxPooling2D", config["pool_size"], config["strides"])
    if isinstance(layer, keras.layers.Dropout):
        return ("Dropout", config["rate"])
    if isinstance(layer, keras.layers.Dense):
        return ("Dense", config["units"], config["activation"])
    if isinstance(layer, keras.layers.Activation):
        return ("Activation", config["activation"])
    return (type(layer).__name__,)


def test_cnn_is_exactly_the_articles_layer_list():
    block = lambda filters: [  # noqa: E731
        ("BatchNormalization",),
        ("Conv2D", filters, (5, 5), "same", "elu"),
        ("MaxPooling2D", (2, 2), (2, 2)),
        ("Dropout", 0.25),
    ]
    expected = block(64) + block(128) + block(256) + [
        ("Flatten",), ("Dense", 256, "linear"), ("Activation", "elu"), ("Dropout", 0.5),
        ("Dense", 10, "linear"), ("Activation", "softmax"),
    ]
    model = cnn.build_cnn()
    assert [_layer_summary(layer) for layer in model.layers] == expected
    # 28 -> 14 -> 7 -> 3 after the pools; 1,619,470 weights (BatchNorm statistics included).
    assert model.output_shape == (None, 10)
    assert model.count_params() == 1_619_470


# -- resnet structure ---------------------------------------------------------------------------
def _weighted(model: keras.Model) -> list:
    return [layer for layer in model.layers if isinstance(layer, (keras.layers.Conv2D, keras.layers.Dense))]


def test_resnet20_has_19_convs_and_one_dense_in_three_stages():
    model = resnet.build_resnet(20)
    weighted = _weighted(model)
    convs = [layer for layer in weighted if isinstance(layer, keras.layers.Conv2D)]
    assert len(weighted) == 20 and len(convs) == 19 and isinstance(weighted[-1], keras.layers.Dense)
    assert all(conv.kernel_size == (3, 3) for conv in convs)  # option A: no 1x1 projection convs
    assert [conv.filters for conv in convs] == [16] * 7 + [32] * 6 + [64] * 6
    assert [conv.strides for conv in convs if conv.strides != (1, 1)] == [(2, 2), (2, 2)]
    assert model.output_shape == (None, 10) and weighted[-1].units == 10
    assert sum(isinstance(layer, keras.layers.GlobalAveragePooling2D) for layer in model.layers) == 1
    assert round(model.count_params() / 1e4) == 27  # the paper's 0.27M


@pytest.mark.parametrize("depth", [8, 32, 56])
def test_resnet_depth_is_6n_plus_2_weighted_layers(depth):
    assert len(_weighted(resnet.build_resnet(depth))) == depth


@pytest.mark.parametrize("depth", [21, 18, 2, 0, "20", 20.0])
def test_resnet_rejects_depths_not_6n_plus_2(depth):
    with pytest.raises(ValueError) as error:
        resnet.build_resnet(depth)
    assert repr(depth) in str(error.value) and "20, 32, 44, 56, 110" in str(error.value)


def test_resnet_model_fn_validates_params_depth():
    images = tf.zeros([2, *RESNET_SHAPE], tf.uint8)
    with pytest.raises(ValueError, match="got 21"):
        resnet.model_fn(images, None, ModeKeys.PREDICT, {"resnet_depth": 21})


def test_zero_pad_shortcut_subsamples_and_pads_channels_with_zeros():
    inputs = tf.reshape(tf.range(2 * 4 * 4 * 16, dtype=tf.float32), [2, 4, 4, 16])
    outputs = resnet.ZeroPadShortcut(32, 2)(inputs).numpy()
    assert outputs.shape == (2, 2, 2, 32) and not outputs[..., :8].any()
    np.testing.assert_array_equal(outputs[..., 8:24], inputs.numpy()[:, ::2, ::2, :])
    assert not outputs[..., 24:].any()


# -- normalisation and the shared spec ----------------------------------------------------------
def test_cnn_normalisation_scales_to_unit_range_and_adds_the_channel_axis():
    images = tf.constant(np.arange(2 * 28 * 28).reshape(2, 28, 28) % 256, tf.uint8)
    with_channel = cnn.normalize(images[..., tf.newaxis])
    np.testing.assert_array_equal(cnn.normalize(images).numpy(), with_channel.numpy())
    assert with_channel.dtype == tf.float32 and with_channel.shape == (2, 28, 28, 1)
    assert float(tf.reduce_min(with_channel)) == 0.0 and float(tf.reduce_max(with_channel)) == 1.0


def test_resnet_normalisation_uses_cifar_channel_statistics():
    mean = np.array(resnet.CIFAR10_MEAN, np.float32)
    normalised = resnet.normalize(tf.constant(np.broadcast_to(mean.round(), (1, 2, 2, 3)).astype(np.uint8)))
    np.testing.assert_allclose(normalised.numpy(), 0.0, atol=0.01)
    with pytest.raises(ValueError, match="RGB"):
        resnet.normalize(tf.zeros([1, 32, 32], tf.uint8))


def test_image_tensor_accepts_a_tensor_or_a_dict():
    images = tf.zeros([1, 28, 28], tf.uint8)
    for features in (images, {"image": images}, {"x": images}):
        assert common.image_tensor(features).shape == (1, 28, 28)
    with pytest.raises(ValueError, match="dict with keys"):
        common.image_tensor({"a": images, "b": images})


def test_predict_and_eval_specs_from_a_direct_model_fn_call():
    keras.utils.set_random_seed(0)
    images, labels = synthetic.load("test", num_examples=4)
    spec = cnn.model_fn(tf.constant(images[..., 0]), None, ModeKeys.PREDICT, {})
    assert isinstance(spec, TPUEstimatorSpec) and spec.loss is None
    assert spec.predictions["classes"].dtype == tf.int64 and spec.predictions["classes"].shape == (4,)
    assert spec.predictions["probabilities"].dtype == tf.float32
    assert spec.predictions["probabilities"].shape == (4, 10)

    spec = cnn.model_fn(tf.constant(images), tf.constant(labels), ModeKeys.EVAL, {})
    metric_fn, tensors = spec.eval_metrics
    accuracy = metric_fn(*tensors)["accuracy"]
    assert spec.loss.shape == () and 0.0 <= float(accuracy.result()) <= 1.0


# -- training through TPUEstimator ---------------------------------------------------------------
def _logged_losses(model_dir: str) -> list[float]:
    """The per-step training losses the engine wrote to model_dir's TensorBoard events, by step."""
    losses = {}
    for path in glob.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(path):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == "loss":
                    losses[event.step] = float(tf.make_ndarray(value.tensor))
    return [losses[step] for step in sorted(losses)]


def _trained(name: str, image_shape: tuple, params: dict, model_dir: str) -> TPUEstimator:
    """`name` trained TRAIN_STEPS steps on one fixed synthetic batch (reshuffled), a loss logged per step."""
    keras.utils.set_random_seed(0)
    info = model_fns.get_model(name)
    config = RunConfig(save_summary_steps=1, log_step_count_steps=TRAIN_STEPS,
                       tpu_config=TPUConfig(iterations_per_loop=1))
    estimator = TPUEstimator(info.model_fn, model_dir=model_dir, config=config,
                             params={**info.default_params, **params}, use_tpu=False,
                             train_batch_size=BATCH, eval_batch_size=BATCH, predict_batch_size=BATCH)
    source = input_fns.get_dataset("synthetic")
    estimator.train(source.input_fn("train", image_shape=image_shape, num_examples=BATCH, seed=0), steps=TRAIN_STEPS)
    return estimator


@pytest.fixture(scope="module")
def trained_cnn(tmp_path_factory) -> TPUEstimator:
    return _trained("cnn", CNN_SHAPE, {}, str(tmp_path_factory.mktemp("cnn")))


@pytest.fixture(scope="module")
def trained_resnet(tmp_path_factory) -> TPUEstimator:
    params = {"resnet_depth": 8, "train_steps": 1000}
    return _trained("resnet", RESNET_SHAPE, params, str(tmp_path_factory.mktemp("resnet")))


@pytest.fixture(params=["cnn", "resnet"])
def trained(request) -> tuple[TPUEstimator, tuple]:
    if request.param == "cnn":
        return request.getfixturevalue("trained_cnn"), CNN_SHAPE
    return request.getfixturevalue("trained_resnet"), RESNET_SHAPE


def test_training_loss_falls_on_a_fixed_batch(trained):
    estimator, _ = trained
    losses = _logged_losses(estimator.model_dir)
    assert len(losses) == TRAIN_STEPS and all(np.isfinite(losses))
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5]), losses


def test_evaluate_reports_accuracy_loss_and_global_step(trained):
    estimator, shape = trained
    source = input_fns.get_dataset("synthetic")
    results = estimator.evaluate(source.input_fn("eval", image_shape=shape, num_examples=2 * BATCH))
    assert results["global_step"] == TRAIN_STEPS
    assert 0.0 <= results["accuracy"] <= 1.0 and np.isfinite(results["loss"])


def test_predict_yields_classes_and_normalised_probabilities(trained):
    estimator, shape = trained
    source = input_fns.get_dataset("synthetic")
    predictions = list(estimator.predict(source.input_fn("infer", image_shape=shape, num_examples=BATCH + 4)))
    assert len(predictions) == BATCH + 4
    for row in predictions:
        probabilities = row["probabilities"]
        assert probabilities.shape == (10,) and probabilities.dtype == np.float32
        assert probabilities.sum() == pytest.approx(1.0, abs=1e-5)
        assert row["classes"].dtype == np.int64 and row["classes"] == probabilities.argmax()


def test_cnn_predicts_the_same_with_or_without_the_channel_axis(trained_cnn):
    images, _ = synthetic.load("test", num_examples=8)

    def input_fn_of(array):
        return lambda params: tf.data.Dataset.from_tensor_slices(array).batch(params["batch_size"])

    with_channel = list(trained_cnn.predict(input_fn_of(images)))
    without_channel = list(trained_cnn.predict(input_fn_of(images[..., 0])))
    np.testing.assert_allclose(
        [row["probabilities"] for row in without_channel], [row["probabilities"] for row in with_channel], rtol=1e-6
    )
    assert [row["classes"] for row in without_channel] == [row["classes"] for row in with_channel]
