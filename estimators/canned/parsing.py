"""classifier_parse_example_spec / regressor_parse_example_spec: the feature columns' tf.Example parsing spec
plus the label (and weight) entry, as 2.15 built them for input_fns that parse tf.Examples."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

_NUMERIC_COLUMN = type(tf.feature_column.numeric_column("_"))  # what tf.feature_column.numeric_column builds


def _columns_spec(feature_columns: Any) -> dict:
    """The columns' own spec: TF2 feature columns through tf.feature_column, others (TF1-only) through
    tf.compat.v1's, since 2.15's public function read either kind."""
    columns = list(feature_columns)
    if all(isinstance(column, tf.__internal__.feature_column.FeatureColumn) for column in columns):
        return tf.feature_column.make_parse_example_spec(columns)
    return tf.compat.v1.feature_column.make_parse_example_spec(columns)


def _with_label(spec: dict, label_key: str, label_spec: tf.io.FixedLenFeature, weight_column: Any) -> dict:
    """`spec` plus the label's entry and the weight column's; neither may be a feature."""
    if label_key in spec:
        raise ValueError(f"label should not be used as feature. label_key: {label_key}, features: {spec.keys()}")
    spec[label_key] = label_spec
    if weight_column is None:
        return spec
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(weight_column)
    if not isinstance(weight_column, _NUMERIC_COLUMN):
        raise ValueError("weight_column should be an instance of tf.feature_column.numeric_column. "
                         f"Given type: {type(weight_column)} value: {weight_column}")
    if weight_column.key in spec:
        raise ValueError(f"weight_column should not be used as feature. weight_column: {weight_column.key}, "
                         f"features: {spec.keys()}")
    spec.update(weight_column.parse_example_spec)
    return spec


def classifier_parse_example_spec(feature_columns: Any, label_key: str, label_dtype: tf.DType = tf.int64,
                                  label_default: Any = None, weight_column: Any = None) -> dict:
    """The parsing spec for a classifier: the features', plus `label_key` as one label per example (an int64
    class id by default, or a string of label_vocabulary) and the weight column's."""
    label = tf.io.FixedLenFeature((1,), label_dtype, label_default)
    return _with_label(_columns_spec(feature_columns), label_key, label, weight_column)


def regressor_parse_example_spec(feature_columns: Any, label_key: str, label_dtype: tf.DType = tf.float32,
                                 label_default: Any = None, label_dimension: int = 1,
                                 weight_column: Any = None) -> dict:
    """The parsing spec for a regressor: the features', plus `label_key` as label_dimension numbers per example
    and the weight column's."""
    label = tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default)
    return _with_label(_columns_spec(feature_columns), label_key, label, weight_column)


def classifier_parse_example_spec_v2(feature_columns: Any, label_key: str, label_dtype: tf.DType = tf.int64,
                                     label_default: Any = None, weight_column: Any = None) -> dict:
    """classifier_parse_example_spec for TF2 feature columns only (2.15's tf.estimator variant)."""
    label = tf.io.FixedLenFeature((1,), label_dtype, label_default)
    return _with_label(tf.feature_column.make_parse_example_spec(list(feature_columns)), label_key, label,
                       weight_column)


def regressor_parse_example_spec_v2(feature_columns: Any, label_key: str, label_dtype: tf.DType = tf.float32,
                                    label_default: Any = None, label_dimension: int = 1,
                                    weight_column: Any = None) -> dict:
    """regressor_parse_example_spec for TF2 feature columns only (2.15's tf.estimator variant)."""
    label = tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default)
    return _with_label(tf.feature_column.make_parse_example_spec(list(feature_columns)), label_key, label,
                       weight_column)
