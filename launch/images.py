"""Image files (PNG, JPEG, GIF, BMP) as the uint8 arrays a dataset stores, for --predict_files."""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def load_images(paths: tuple[str, ...] | list[str], image_shape: tuple[int, int, int]) -> np.ndarray:
    """Decodes, converts channels and resizes each file to image_shape; ValueError names a bad file."""
    height, width, channels = image_shape
    images = []
    for path in paths:
        if not tf.io.gfile.exists(path):
            raise ValueError(f"--predict_files: {path!r} does not exist.")
        try:
            image = tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)
        except tf.errors.InvalidArgumentError:
            raise ValueError(f"--predict_files: {path!r} is not a PNG, JPEG, GIF or BMP image.") from None
        if channels == 1:
            image = tf.image.rgb_to_grayscale(image)
        image = tf.image.resize(image, [height, width], antialias=True)
        images.append(tf.cast(tf.clip_by_value(tf.round(image), 0, 255), tf.uint8).numpy())
    return np.stack(images)
