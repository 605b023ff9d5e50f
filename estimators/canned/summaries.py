"""The training summaries 2.15's canned models wrote: each layer's fraction of zero values (scalar) and its
activations (histogram), the linear model's bias and fraction of zero weights."""

from __future__ import annotations

import tensorflow as tf


def layer_summary(value: tf.Tensor, tag: str) -> None:
    """`<tag>/fraction_of_zero_values` and `<tag>/activation`, at the graph's top name scope (tags as 2.15's)."""
    with tf.compat.v1.get_default_graph().name_scope(""):
        tf.compat.v1.summary.scalar(f"{tag}/fraction_of_zero_values", tf.math.zero_fraction(value))
        tf.compat.v1.summary.histogram(f"{tag}/activation", value)


def linear_weights_summary(bias: tf.Tensor, weights: list[tf.Tensor]) -> None:
    """`bias` (a scalar for one output, else a histogram) and `fraction_of_zero_weights` over every weight of the
    linear model."""
    with tf.compat.v1.get_default_graph().name_scope(""):
        if bias.shape.num_elements() == 1:
            tf.compat.v1.summary.scalar("bias", tf.reshape(bias, []))
        else:
            tf.compat.v1.summary.histogram("bias", bias)
        if weights:
            flat = tf.concat([tf.reshape(w, [-1]) for w in weights], axis=0)
            tf.compat.v1.summary.scalar("fraction_of_zero_weights", tf.math.zero_fraction(flat))
