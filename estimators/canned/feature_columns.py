"""Feature-column checks and inputs shared by the canned models."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tensorflow as tf


def checked_columns(columns: Any, what: str) -> tuple:
    """`columns` as a tuple of feature columns (a single one counts as one); ValueError when there are none or
    one is not a feature column."""
    if columns is None:
        return ()
    if not isinstance(columns, Iterable) or isinstance(columns, (str, dict)):
        columns = [columns]
    columns = tuple(columns)
    for column in columns:
        if not hasattr(column, "parse_example_spec") and not hasattr(column, "_parse_example_spec"):
            raise ValueError(f"Items of {what} must be a feature column (tf.feature_column.*). Given: {column!r}")
    return columns


def batch_size_of(features: dict) -> tf.Tensor:
    """The batch size: the first dimension of the first feature (by name)."""
    if not features:
        raise ValueError("features must not be empty: the batch size is read from them.")
    first = features[sorted(features)[0]]
    if isinstance(first, tf.SparseTensor):
        return tf.cast(first.dense_shape[0], tf.int32)
    return tf.shape(first)[0]

