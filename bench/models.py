"""The networks, losses, optimizers and data of each workload, shared by every contender.

ours gets the project's model_fn; the hand loop and Keras fit get a `Net` built from the very
same model_fns building blocks (build_cnn + cnn.logits, build_resnet, normalisation, optimizer,
weight decay), so all three contenders run the same computation on the same tf.data pipeline.
The tiny MLP exists only here: a model_fn written with model_fns.common like the seed models.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import keras
import tensorflow as tf

import input_fns
from estimators import ModeKeys, TPUEstimatorSpec
from input_fns.synthetic import make_source
from model_fns import cnn, common, get_model, resnet

MLP_PARAMS = {"learning_rate": 1e-3, "hidden_units": 64}


@dataclasses.dataclass(frozen=True)
class Net:
    """A network as the no-framework contenders see it: build, forward, loss and optimizer."""

    build: Callable[[], keras.Model]
    logits_fn: Callable[[keras.Model, tf.Tensor, bool], tf.Tensor]  # normalised images -> logits
    normalize: Callable[[tf.Tensor], tf.Tensor]  # raw uint8 batch -> float images
    make_optimizer: Callable[[], keras.optimizers.Optimizer]
    regularization: Callable[[keras.Model], tf.Tensor] | None = None

    def forward(self, model: keras.Model, images: tf.Tensor, training: bool) -> tf.Tensor:
        """float32 logits from raw uint8 images (cast as model_fns.common does)."""
        return tf.cast(self.logits_fn(model, self.normalize(images), training), tf.float32)

    def loss(self, model: keras.Model, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        """Mean sparse cross-entropy from logits, plus the model's regularisation (model_fns' loss)."""
        per_example = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
        loss = tf.reduce_mean(tf.cast(per_example, tf.float32))
        if self.regularization is not None:
            loss = loss + tf.cast(self.regularization(model), tf.float32)
        return loss


# -- the tiny MLP ------------------------------------------------------------------------------------


def build_mlp(input_shape: tuple[int, ...], hidden_units: int = 64, num_classes: int = 10) -> keras.Sequential:
    """Flatten -> Dense(hidden, relu) -> Dense(num_classes): a few microseconds of math per step."""
    return keras.Sequential(
        [
            keras.Input(shape=tuple(input_shape)),
            keras.layers.Flatten(),
            keras.layers.Dense(hidden_units, activation="relu"),
            keras.layers.Dense(num_classes),
        ],
        name="mlp",
    )


def _call_logits(model: keras.Model, images: tf.Tensor, training: bool) -> tf.Tensor:
    return model(images, training=training)


def mlp_model_fn(features: Any, labels: Any, mode: str, params: dict) -> TPUEstimatorSpec:
    """TPUEstimator model_fn of the MLP, written like the seed models' model_fns."""
    params = common.merged_params(MLP_PARAMS, params)
    images = cnn.normalize(common.image_tensor(features))
    model = build_mlp(images.shape[1:], params["hidden_units"])
    return common.classifier_spec(
        mode,
        model(images, training=mode == ModeKeys.TRAIN),
        labels,
        lambda: keras.optimizers.Adam(params["learning_rate"]),
        model.trainable_variables,
    )


# -- per-workload lookups ----------------------------------------------------------------------------


def model_fn(model: str) -> Callable:
    """The model_fn ours trains."""
    return mlp_model_fn if model == "mlp" else get_model(model).model_fn


def engine_precision(policy: str) -> str:
    """The engine's precision setting (params["precision"]) for a Keras policy name: bfloat16 or float32."""
    return {"float32": "float32", "mixed_bfloat16": "bfloat16"}[policy]


def params(model: str) -> dict:
    """The model_fn params every contender uses (the registered defaults)."""
    if model == "mlp":
        return dict(MLP_PARAMS)
    return dict(get_model(model).default_params)


def net(model: str, image_shape: tuple[int, int, int], model_params: Mapping[str, Any], batch_size: int) -> Net:
    """The Net equivalent to model_fn(model) with these params."""
    p = dict(model_params)
    if model == "cnn":
        return Net(lambda: cnn.build_cnn(image_shape), cnn.logits, cnn.normalize,
                   lambda: keras.optimizers.Adam(p["learning_rate"]))
    if model == "resnet":
        def make_sgd() -> keras.optimizers.Optimizer:
            return keras.optimizers.SGD(resnet.learning_rate_schedule(p, batch_size), momentum=p["momentum"])

        return Net(lambda: resnet.build_resnet(p["resnet_depth"], image_shape), _call_logits, resnet.normalize,
                   make_sgd, regularization=lambda m: resnet.weight_decay_loss(m, p["weight_decay"]))
    if model == "mlp":
        return Net(lambda: build_mlp(image_shape, p["hidden_units"]), _call_logits, cnn.normalize,
                   lambda: keras.optimizers.Adam(p["learning_rate"]))
    raise ValueError(f"unknown model {model!r}")


def source(dataset: str, image_shape: tuple[int, int, int]) -> input_fns.DatasetSource:
    """The project's DatasetSource for the workload (synthetic data takes the image shape)."""
    if dataset == "synthetic":
        return make_source(image_shape=image_shape)
    return input_fns.get_dataset(dataset)


def train_dataset(data: input_fns.DatasetSource, batch_size: int, seed: int) -> tf.data.Dataset:
    """The project's training pipeline, exactly as the engine calls it (shuffle, repeat, batch)."""
    return data.input_fn("train", seed=seed)({"batch_size": batch_size})


def test_accuracy(network: Net, model: keras.Model, data: input_fns.DatasetSource, batch_size: int = 500) -> float:
    """Top-1 accuracy on the test split, inference mode (BatchNorm moving stats, no dropout)."""
    images, labels = data.load("test")
    batches = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch_size)

    @tf.function
    def correct(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        predicted = tf.argmax(network.forward(model, x, False), axis=-1, output_type=tf.int32)
        return tf.reduce_sum(tf.cast(tf.equal(predicted, y), tf.int64))

    hits = sum(int(correct(x, y)) for x, y in batches)
    return hits / len(labels)
