"""LinearClassifier, LinearRegressor and LinearEstimator: a linear model over feature columns (2.15's API)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers, summaries
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.feature_columns import checked_columns
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
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



def linear_logits(features: dict, units: int, feature_columns: tuple,
                  sparse_combiner: str = "sum") -> tuple[tf.Tensor, list]:
    """(logits, trainable variables) of a linear model under scope `linear`, each column's weights zero at first."""
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f"sparse_combiner must be one of 'sum', 'mean', 'sqrtn', got {sparse_combiner!r}.")
    with tf.compat.v1.variable_scope("linear") as scope:
        columns_to_variables: dict = {}
        logits = tf.compat.v1.feature_column.linear_model(
            features=dict(features), feature_columns=list(feature_columns), units=units,
            sparse_combiner=sparse_combiner, cols_to_vars=columns_to_variables)
        variables = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, scope=scope.name + "/")
    bias = columns_to_variables.pop("bias")
    weights = [w for column_vars in columns_to_variables.values() for w in column_vars]
    summaries.linear_weights_summary(bias[0] if isinstance(bias, list) else bias, weights)
    return logits, variables

class LinearEstimator(CannedEstimator):
    """A linear model with any head (2.15: tf.estimator.LinearEstimator)."""

    def __init__(self, head: Head, feature_columns: Any, model_dir: str | None = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None, sparse_combiner: str = "sum", warm_start_from: Any = None):
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
        head = classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, sparse_combiner, warm_start_from)


class LinearRegressor(LinearEstimator):
    """A linear regressor (least squares) (2.15: tf.estimator.LinearRegressor)."""

    def __init__(self, feature_columns: Any, model_dir: str | None = None, label_dimension: int = 1,
                 weight_column: Any = None, optimizer: Any = "Ftrl", config: RunConfig | None = None,
                 warm_start_from: Any = None, loss_reduction: Any = SUM_OVER_BATCH_SIZE, sparse_combiner: str = "sum"):
        head = regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, sparse_combiner, warm_start_from)
