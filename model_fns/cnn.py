"""The Fashion-MNIST CNN of the 2018 Colab TPU article ("train Keras models 20x faster with TPU").

Three BatchNorm -> Conv2D(5x5, elu) -> MaxPool -> Dropout(.25) blocks of 64, 128 and 256 filters,
then Dense(256, elu), Dropout(.5), Dense(10) and softmax; Adam at a constant 1e-3 (params
"lr_schedule" and "warmup_steps" can schedule it: model_fns/lr_schedules.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras
import tensorflow as tf

from estimators import ModeKeys, TPUEstimatorSpec
from model_fns import common
from model_fns.registry import register

__all__ = ["DEFAULT_PARAMS", "IMAGE_SHAPE", "build_cnn", "logits", "model_fn", "normalize"]

IMAGE_SHAPE = (28, 28, 1)
NUM_CLASSES = 10
DEFAULT_PARAMS = {"learning_rate": 1e-3, "lr_schedule": "constant", "warmup_steps": 0}


def build_cnn(input_shape: Sequence[int] = IMAGE_SHAPE, num_classes: int = NUM_CLASSES) -> keras.Sequential:
    """The article's network, layer for layer; takes normalised float images, ends in softmax."""
    layers = keras.layers
    model = keras.Sequential(name="cnn")
    model.add(keras.Input(shape=tuple(input_shape)))
    for filters, pool_strides in ((64, (2, 2)), (128, None), (256, (2, 2))):
        # The article gives strides=(2, 2) for the first and last pools; None means the same (= pool size).
        model.add(layers.BatchNormalization())
        model.add(layers.Conv2D(filters, (5, 5), padding="same", activation="elu"))
        model.add(layers.MaxPooling2D(pool_size=(2, 2), strides=pool_strides))
        model.add(layers.Dropout(0.25))
    model.add(layers.Flatten())
    model.add(layers.Dense(256))
    model.add(layers.Activation("elu"))
    model.add(layers.Dropout(0.5))
    model.add(layers.Dense(num_classes))
    model.add(layers.Activation("softmax"))
    return model


def normalize(images: tf.Tensor) -> tf.Tensor:
    """Raw uint8 images [b,H,W] or [b,H,W,C] -> float32 [b,H,W,C] in [0, 1]."""
    if images.shape.rank == 3:
        images = tf.expand_dims(images, -1)
    if images.shape.rank != 4:
        raise ValueError(f"cnn expects images [batch, height, width(, channels)], got shape {images.shape}.")
    return tf.cast(images, tf.float32) / 255.0


def logits(model: keras.Sequential, images: tf.Tensor, training: bool) -> tf.Tensor:
    """The network's output before its final softmax layer, so the loss can use logits (stable)."""
    outputs = images
    for layer in model.layers[:-1]:
        outputs = layer(outputs, training=training)
    return outputs


@register("cnn", "fashion_mnist", DEFAULT_PARAMS, image_shape=IMAGE_SHAPE, network=lambda params: build_cnn())
def model_fn(features: Any, labels: Any, mode: str, params: dict) -> TPUEstimatorSpec:
    """TPUEstimator model_fn for the article's CNN on raw uint8 images."""
    params = common.merged_params(DEFAULT_PARAMS, params)
    images = normalize(common.image_tensor(features))
    model = build_cnn(images.shape[1:])
    return common.classifier_spec(
        mode,
        logits(model, images, training=mode == ModeKeys.TRAIN),
        labels,
        lambda: keras.optimizers.Adam(common.learning_rate(params)),
        model.trainable_variables,
        confusion_matrix=bool(params.get(common.CONFUSION_MATRIX)),
    )
