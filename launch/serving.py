"""The serving signature of the image models: raw images as the dataset stores them."""

from __future__ import annotations

import tensorflow as tf

from estimators.export import TensorServingInputReceiver


def image_receiver_fn(image_shape: tuple[int, int, int]):
    """Takes uint8 images [N,H,W,C], or [N,H,W] for one channel, and feeds [N,H,W,C] to model_fn."""
    height, width, channels = image_shape

    def receiver_fn() -> TensorServingInputReceiver:
        images = tf.compat.v1.placeholder(tf.uint8, shape=None, name="images")
        return TensorServingInputReceiver(tf.reshape(images, [-1, height, width, channels]), {"images": images})

    return receiver_fn
