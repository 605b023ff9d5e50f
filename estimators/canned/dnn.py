"""DNNClassifier, DNNRegressor and DNNEstimator: a fully connected network over feature columns (2.15's API)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.feature_columns import checked_columns
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
from estimators.canned.models import dnn_logits
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig

# 2.15's DNN (V2) resolved an optimizer name without a learning rate, so 'Adagrad' trained at Keras' own default,
# 0.001 (its V1 DNN used 0.05; 2.15's checkpoints hold training/Adagrad/learning_rate = 0.001).
LEARNING_RATE = None


def dnn_model_fn(head: Head, hidden_units: Sequence[int], feature_columns: tuple, optimizer: Any,
                 activation_fn: Callable, dropout: float | None, batch_norm: bool) -> Callable:
    """The model_fn: dnn_logits through `head`, trained by a fresh optimizer per graph."""
    make_optimizer = optimizers.resolve(optimizer, LEARNING_RATE)

    def model_fn(features, labels, mode, config):
        del config
        if not isinstance(features, dict):
            raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
        logits, variables, updates = dnn_logits(features, mode, head.logits_dimension, hidden_units,
                                                feature_columns, activation_fn, dropout, batch_norm)
        train = mode == ModeKeys.TRAIN
        return head.create_estimator_spec(features=features, mode=mode, logits=logits, labels=labels,
                                          optimizer=make_optimizer() if train else None,
                                          trainable_variables=variables, update_ops=updates)
    return model_fn


class DNNEstimator(CannedEstimator):
    """A DNN with any head (2.15: tf.estimator.DNNEstimator)."""

    def __init__(self, head: Head, hidden_units: Sequence[int], feature_columns: Any, model_dir: str | None = None,
                 optimizer: Any = "Adagrad", activation_fn: Callable = tf.nn.relu, dropout: float | None = None,
                 config: RunConfig | None = None, warm_start_from: Any = None, batch_norm: bool = False):
        columns = checked_columns(feature_columns, "feature_columns")
        if not columns:
            raise ValueError("feature_columns must not be empty.")
        if not hidden_units:
            raise ValueError("hidden_units must be a non-empty list of layer widths.")
        self._head = checked_head(head)
        super().__init__(dnn_model_fn(self._head, tuple(hidden_units), columns, optimizer, activation_fn, dropout,
                                      batch_norm), model_dir, config, warm_start_from)


class DNNClassifier(DNNEstimator):
    """A DNN classifier: sigmoid cross-entropy for 2 classes, softmax for more (2.15: tf.estimator.DNNClassifier)."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Any, model_dir: str | None = None,
                 n_classes: int = 2, weight_column: Any = None, label_vocabulary: Sequence[str] | None = None,
                 optimizer: Any = "Adagrad", activation_fn: Callable = tf.nn.relu, dropout: float | None = None,
                 config: RunConfig | None = None, warm_start_from: Any = None,
                 loss_reduction: Any = SUM_OVER_BATCH_SIZE, batch_norm: bool = False):
        head = classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout, config,
                         warm_start_from, batch_norm)


class DNNRegressor(DNNEstimator):
    """A DNN regressor: mean squared error over label_dimension targets (2.15: tf.estimator.DNNRegressor)."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Any, model_dir: str | None = None,
                 label_dimension: int = 1, weight_column: Any = None, optimizer: Any = "Adagrad",
                 activation_fn: Callable = tf.nn.relu, dropout: float | None = None, config: RunConfig | None = None,
                 warm_start_from: Any = None, loss_reduction: Any = SUM_OVER_BATCH_SIZE, batch_norm: bool = False):
        head = regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout, config,
                         warm_start_from, batch_norm)
