"""BaselineClassifier, BaselineRegressor and BaselineEstimator: one learned bias per output, features ignored
(the label's prior, to beat) (2.15's API)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.feature_columns import batch_size_of
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig

LEARNING_RATE = 0.3  # 2.15's default for the baseline's optimizer named by a string


def baseline_model_fn(head: Head, optimizer: Any) -> Callable:
    """The model_fn: baseline_logits through `head`."""
    make_optimizer = optimizers.resolve(optimizer, LEARNING_RATE)

    def model_fn(features, labels, mode, config):
        del config
        if not isinstance(features, dict):
            raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
        logits, variables = baseline_logits(features, head.logits_dimension)
        train = mode == ModeKeys.TRAIN
        return head.create_estimator_spec(features=features, mode=mode, logits=logits, labels=labels,
                                          optimizer=make_optimizer() if train else None,
                                          trainable_variables=variables)
    return model_fn



def baseline_logits(features: dict, units: int) -> tuple[tf.Tensor, list]:
    """(logits, [bias]): the same learned bias for every example, `baseline/bias`."""
    with tf.compat.v1.variable_scope("baseline"):
        bias = tf.compat.v1.get_variable("bias", [units], tf.float32, tf.compat.v1.zeros_initializer())
    logits = bias * tf.ones(tf.stack([batch_size_of(features), units]))
    return logits, [bias]

class BaselineEstimator(CannedEstimator):
    """A baseline with any head (2.15: tf.estimator.BaselineEstimator)."""

    def __init__(self, head: Head, model_dir: str | None = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None):
        self._head = checked_head(head)
        super().__init__(baseline_model_fn(self._head, optimizer), model_dir, config)


class BaselineClassifier(BaselineEstimator):
    """Predicts the classes' frequencies seen in training (2.15: tf.estimator.BaselineClassifier)."""

    def __init__(self, model_dir: str | None = None, n_classes: int = 2, weight_column: Any = None,
                 label_vocabulary: Sequence[str] | None = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None, loss_reduction: Any = SUM_OVER_BATCH_SIZE):
        head = classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, optimizer, config)


class BaselineRegressor(BaselineEstimator):
    """Predicts the mean label seen in training (2.15: tf.estimator.BaselineRegressor)."""

    def __init__(self, model_dir: str | None = None, label_dimension: int = 1, weight_column: Any = None,
                 optimizer: Any = "Ftrl", config: RunConfig | None = None,
                 loss_reduction: Any = SUM_OVER_BATCH_SIZE):
        head = regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, optimizer, config)
