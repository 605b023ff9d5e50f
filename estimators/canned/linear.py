"""LinearClassifier, LinearRegressor and LinearEstimator: a linear model over feature columns (2.15's API), with
2.15's logit-fn builder and zero-fraction summary; the network itself is linear_model.LinearModel."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.feature_columns import checked_columns
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
from estimators.canned.linear_model import check_v2_columns, is_v2_columns, linear_model_class
from estimators.canned.linear_sdca import LinearSDCA, check_for_classifier, check_for_estimator, check_for_regressor
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig

LEARNING_RATE = 0.2  # 2.15's default for the linear model's optimizer named by a string


def default_learning_rate(n_columns: int, cap: float = LEARNING_RATE) -> float:
    """2.15's FTRL learning rate when no optimizer is given: min(cap, 1 / sqrt(number of feature columns))."""
    return min(cap, 1.0 / math.sqrt(n_columns))


def linear_model_fn(head: Head, feature_columns: tuple, optimizer: Any, sparse_combiner: str) -> Callable:
    """The model_fn: linear_logits through `head`; optimizer None means FTRL at default_learning_rate."""
    if optimizer is None:
        make_optimizer = optimizers.resolve("Ftrl", default_learning_rate(len(feature_columns)))
    else:
        make_optimizer = optimizers.resolve(optimizer, LEARNING_RATE)

    def model_fn(features, labels, mode, config):
        del config
        if not isinstance(features, dict):
            raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
        logits, variables = linear_logits(features, head.logits_dimension, feature_columns, sparse_combiner)
        train = mode == ModeKeys.TRAIN
        return head.create_estimator_spec(features=features, mode=mode, logits=logits, labels=labels,
                                          optimizer=make_optimizer() if train else None,
                                          trainable_variables=variables)
    return model_fn


def _compute_fraction_of_zero(variables: Any) -> tf.Tensor:
    """The fraction of zero entries over all of `variables` (a nested list of tensors or variables), counted
    per tensor so that no concatenated copy is made; NaN when they hold no entries at all."""
    flat = tf.nest.flatten(variables)
    if not flat:
        raise ValueError("_compute_fraction_of_zero needs at least one variable or tensor.")
    with tf.name_scope("zero_fraction"):
        sizes = [tf.size(value, out_type=tf.int64) for value in flat]
        zeros = [tf.cond(tf.equal(size, 0), lambda: tf.constant(0.0),
                         lambda value=value, size=size: tf.math.zero_fraction(value) * tf.cast(size, tf.float32))
                 for value, size in zip(flat, sizes, strict=True)]
        total = tf.cast(tf.math.add_n(sizes), tf.float32)
        return tf.identity(tf.math.add_n(zeros) / total, name="zero_fraction_or_nan")


def _summaries(bias: tf.Variable, weights: list) -> None:
    """2.15's `bias` (a scalar for one output, else a histogram) and `fraction_of_zero_weights`, top-level tags."""
    with tf.compat.v1.get_default_graph().name_scope(""):
        if bias.shape.num_elements() == 1:
            tf.compat.v1.summary.scalar("bias", bias[0])
        else:
            tf.compat.v1.summary.histogram("bias", bias)
        tf.compat.v1.summary.scalar("fraction_of_zero_weights", _compute_fraction_of_zero(weights))


def _built_model(features: dict, units: int, feature_columns: Any, sparse_combiner: str,
                 name: str) -> tuple[tf.Tensor, tf.Variable, list]:
    """(logits, bias, weights) of a LinearModel called once on `features`, with its summaries written."""
    model = linear_model_class()(feature_columns=feature_columns, units=units, sparse_combiner=sparse_combiner,
                                 name=name)
    logits = model(features)
    weights = [v for v in model.variables if v is not model.bias]
    _summaries(model.bias, weights)
    return logits, model.bias, weights


def linear_logits(features: dict, units: int, feature_columns: tuple,
                  sparse_combiner: str = "sum") -> tuple[tf.Tensor, list]:
    """(logits, trainable variables) of the estimators' linear model: a LinearModel named `linear/linear_model`
    (2.15's variable names), each column's weights and the bias zero at first; v2 feature columns only."""
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f"sparse_combiner must be one of 'sum', 'mean', 'sqrtn', got {sparse_combiner!r}.")
    check_v2_columns(feature_columns)
    logits, bias, weights = _built_model(features, units, feature_columns, sparse_combiner, "linear/linear_model")
    return logits, [*weights, bias]


def linear_logit_fn_builder(units: int, feature_columns: Any, sparse_combiner: str = "sum") -> Callable:
    """2.15's tf.estimator.experimental.linear_logit_fn_builder: a logit_fn(features) building a linear model
    named `linear_model` (a LinearModel for v2 columns, tf.compat.v1.feature_column.linear_model for v1 ones)."""

    def linear_logit_fn(features):
        if is_v2_columns(feature_columns):
            return _built_model(features, units, feature_columns, sparse_combiner, "linear_model")[0]
        columns_to_variables: dict = {}
        logits = tf.compat.v1.feature_column.linear_model(
            features=features, feature_columns=feature_columns, units=units, sparse_combiner=sparse_combiner,
            cols_to_vars=columns_to_variables)
        bias = columns_to_variables.pop("bias")
        _summaries(bias[0] if isinstance(bias, list) else bias,
                   [w for column_vars in columns_to_variables.values() for w in column_vars])
        return logits
    return linear_logit_fn


def linear_logit_fn_builder_v2(units: int, feature_columns: Any, sparse_combiner: str = "sum") -> Callable:
    """linear_logit_fn_builder for v2 feature columns only (2.15's ValueError for a v1 column)."""
    def linear_logit_fn(features):
        check_v2_columns(feature_columns)
        return _built_model(features, units, feature_columns, sparse_combiner, "linear_model")[0]
    return linear_logit_fn


__all__ = ["LinearClassifier", "LinearEstimator", "LinearRegressor", "LinearSDCA",
           "default_learning_rate", "linear_logit_fn_builder", "linear_logits"]


def __getattr__(name: str) -> Any:
    """`LinearModel` is made on first use: it subclasses tf_keras.Model, an optional install."""
    if name == "LinearModel":
        return linear_model_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class LinearEstimator(CannedEstimator):
    """A linear model with any head (2.15: tf.estimator.LinearEstimator)."""

    def __init__(self, head: Head, feature_columns: Any, model_dir: str | None = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None, sparse_combiner: str = "sum", warm_start_from: Any = None):
        check_for_estimator(optimizer)
        columns = checked_columns(feature_columns, "feature_columns")
        if not columns:
            raise ValueError("feature_columns must not be empty.")
        if sparse_combiner not in ("sum", "mean", "sqrtn"):
            raise ValueError(f"sparse_combiner must be one of 'sum', 'mean', 'sqrtn', got {sparse_combiner!r}.")
        self._head = checked_head(head)
        super().__init__(linear_model_fn(self._head, columns, optimizer, sparse_combiner), model_dir, config,
                         warm_start_from)


class LinearClassifier(LinearEstimator):
    """A linear classifier (logistic regression for 2 classes) (2.15: tf.estimator.LinearClassifier)."""

    def __init__(self, feature_columns: Any, model_dir: str | None = None, n_classes: int = 2,
                 weight_column: Any = None, label_vocabulary: Sequence[str] | None = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None, warm_start_from: Any = None,
                 loss_reduction: Any = SUM_OVER_BATCH_SIZE, sparse_combiner: str = "sum"):
        check_for_classifier(feature_columns, n_classes, optimizer, sparse_combiner)
        head = classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, sparse_combiner, warm_start_from)


class LinearRegressor(LinearEstimator):
    """A linear regressor (least squares) (2.15: tf.estimator.LinearRegressor)."""

    def __init__(self, feature_columns: Any, model_dir: str | None = None, label_dimension: int = 1,
                 weight_column: Any = None, optimizer: Any = "Ftrl", config: RunConfig | None = None,
                 warm_start_from: Any = None, loss_reduction: Any = SUM_OVER_BATCH_SIZE, sparse_combiner: str = "sum"):
        check_for_regressor(feature_columns, label_dimension, optimizer, sparse_combiner)
        head = regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, sparse_combiner, warm_start_from)
