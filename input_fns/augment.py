"""Train-time image augmentation as stateless tf ops (reproducible given the per-example seed)."""

from __future__ import annotations

import tensorflow as tf


def pad_crop_flip(image: tf.Tensor, seed: tf.Tensor, pad: int = 4) -> tf.Tensor:
    """Reflect-pad by `pad` pixels, random-crop back to the original size, random left-right flip.

    Keeps dtype (uint8 stays uint8) and the static [H, W, C] shape; `seed` is a shape-[2] int tensor.
    """
    shape = image.shape
    crop_seed, flip_seed = tf.unstack(tf.random.experimental.stateless_split(seed, num=2))
    padded = tf.pad(image, [[pad, pad], [pad, pad], [0, 0]], mode="REFLECT")
    cropped = tf.image.stateless_random_crop(padded, size=shape, seed=crop_seed)
    flipped = tf.image.stateless_random_flip_left_right(cropped, seed=flip_seed)
    return tf.ensure_shape(flipped, shape)
