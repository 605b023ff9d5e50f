"""classifier_parse_example_spec / regressor_parse_example_spec: the feature columns' tf.Example parsing spec
plus the label (and weight) entry, as 2.15 built them for input_fns that parse tf.Examples."""

from __future__ import annotations

from typing import Any

import tensorflow as tf


def _with_label(feature_columns: Any, label_key: str, label_spec: Any, weight_column: Any) -> dict:
    spec = tf.feature_column.make_parse_example_spec(list(feature_columns))
    if label_key in spec:
        raise ValueError(f"label should not be used as feature. label_key: {label_key}, features: {sorted(spec)}")
    spec[label_key] = label_spec
    if weight_column is not None:
        if isinstance(weight_column, str):
            weight_column = tf.feature_column.numeric_column(weight_column)
        spec.update(tf.feature_column.make_parse_example_spec([weight_column]))
    return spec


def classifier_parse_example_spec(feature_columns: Any, label_key: str, label_dtype: tf.DType = tf.int64,
                                  label_default: Any = None, weight_column: Any = None) -> dict:
    """The parsing spec for a classifier: the features', plus `label_key` as one int64 (or string) per example."""
    if label_dtype not in (tf.int64, tf.string):
        raise ValueError(f"label_dtype should be int64 or string, got {label_dtype}.")
    if label_default is not None and not isinstance(label_default, (int, str, bytes)):
        raise ValueError(f"label_default should be an int or a string, got {label_default!r}.")
    return _with_label(feature_columns, label_key,
                       tf.io.FixedLenFeature((1,), label_dtype, default_value=label_default), weight_column)


def regressor_parse_example_spec(feature_columns: Any, label_key: str, label_dtype: tf.DType = tf.float32,
                                 label_default: Any = None, label_dimension: int = 1,
                                 weight_column: Any = None) -> dict:
    """The parsing spec for a regressor: the features', plus `label_key` as label_dimension numbers per example."""
    return _with_label(feature_columns, label_key,
                       tf.io.FixedLenFeature((label_dimension,), label_dtype, default_value=label_default),
                       weight_column)
