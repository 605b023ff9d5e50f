"""The serving signature of the image models: raw images as the dataset stores them."""

from __future__ import annotations

import tensorflow as tf

from estimators.export import ServingInputReceiver


def image_receiver_fn(image_shape: tuple[int, int, int]):
    """Takes uint8 images [N,H,W,C], or [N,H,W] for one channel, and feeds [N,H,W,C] to model_fn."""
    height, width, channels = image_shape

    def features(inputs: dict) -> tf.Tensor:
        images = inputs["images"]
        return tf.reshape(images, [-1, height, width, channels])

    def receiver_fn() -> ServingInputReceiver:
        return ServingInputReceiver({"images": tf.TensorSpec(None, tf.uint8, name="images")}, features)

    return receiver_fn
