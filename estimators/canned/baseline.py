"""BaselineClassifier, BaselineRegressor and BaselineEstimator: one learned bias per output, features ignored
(the label's prior, to beat) (2.15's API)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig

LEARNING_RATE = 0.3  # 2.15's default for the baseline's optimizer named by a string
_NUMERIC_COLUMN = type(tf.feature_column.numeric_column("_"))  # what tf.feature_column.numeric_column builds


def baseline_model_fn(head: Head, optimizer: Any, weight_column: Any = None) -> Callable:
    """The model_fn: the baseline's logits through `head`; `weight_column` is left out of the batch size."""
    make_optimizer = optimizers.resolve(optimizer, LEARNING_RATE)

    def model_fn(features, labels, mode, config):
        del config
        if not isinstance(features, dict):
            raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
        variables, logits = _baseline_model_fn_builder_v2(features, head.logits_dimension, weight_column)
        train = mode == ModeKeys.TRAIN
        return head.create_estimator_spec(features=features, mode=mode, logits=logits, labels=labels,
                                          optimizer=make_optimizer() if train else None,
                                          trainable_variables=variables)
    return model_fn


def _weight_key(weight_column: Any) -> str | None:
    """The feature key of `weight_column` (a name or a tf.feature_column.numeric_column)."""
    if weight_column is None or isinstance(weight_column, str):
        return weight_column
    if not isinstance(weight_column, _NUMERIC_COLUMN):
        raise TypeError(f"Weight column must be either a string or NumericColumn. Given type: {type(weight_column)}.")
    return weight_column.key


def _batch_size(features: dict, weight_key: str | None) -> tuple[tf.Tensor, list]:
    """(batch size, checks that every feature has it): the first dimension of the features but the weight,
    which serving inputs may lack."""
    if not features:
        raise ValueError("features must not be empty: the batch size is read from them.")
    sizes = [tf.compat.v1.shape(value)[0] for key, value in features.items() if key != weight_key]
    if not sizes:
        raise ValueError(f"features hold only the weight column {weight_key!r}: the batch size is read from the "
                         "others.")
    return sizes[0], [tf.compat.v1.debugging.assert_equal(sizes[0], size) for size in sizes[1:]]


def _baseline_model_fn_builder_v2(features: dict, num_outputs: int,
                                  weight_column: Any = None) -> tuple[list, tf.Tensor]:
    """([bias], logits): the same learned bias `baseline/bias` for every example (2.15's names and order)."""
    batch_size, checks = _batch_size(features, _weight_key(weight_column))
    with tf.control_dependencies(checks):
        with tf.compat.v1.variable_scope("baseline"):
            bias = tf.compat.v1.get_variable("bias", [num_outputs], tf.float32, tf.compat.v1.zeros_initializer())
        logits = bias * tf.ones(tf.stack([batch_size, num_outputs]))
    return [bias], logits


class BaselineEstimator(CannedEstimator):
    """A baseline with any head (2.15: tf.estimator.BaselineEstimator)."""

    _weight_column: Any = None  # the classifier's and regressor's, left out of the batch size

    def __init__(self, head: Head, model_dir: str | None = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None):
        self._head = checked_head(head)
        super().__init__(baseline_model_fn(self._head, optimizer, self._weight_column), model_dir, config)


class BaselineClassifier(BaselineEstimator):
    """Predicts the classes' frequencies seen in training (2.15: tf.estimator.BaselineClassifier)."""

    def __init__(self, model_dir: str | None = None, n_classes: int = 2, weight_column: Any = None,
                 label_vocabulary: Sequence[str] | None = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None, loss_reduction: Any = SUM_OVER_BATCH_SIZE):
        head = classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        self._weight_column = weight_column
        super().__init__(head, model_dir, optimizer, config)


class BaselineRegressor(BaselineEstimator):
    """Predicts the mean label seen in training (2.15: tf.estimator.BaselineRegressor)."""

    def __init__(self, model_dir: str | None = None, label_dimension: int = 1, weight_column: Any = None,
                 optimizer: Any = "Ftrl", config: RunConfig | None = None,
                 loss_reduction: Any = SUM_OVER_BATCH_SIZE):
        head = regressor_head(label_dimension, weight_column, loss_reduction)
        self._weight_column = weight_column
        super().__init__(head, model_dir, optimizer, config)
