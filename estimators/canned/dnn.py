"""DNNClassifier, DNNRegressor and DNNEstimator: a fully connected network over feature columns (2.15's API)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers, summaries
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.feature_columns import checked_columns, dense_input
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
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



_BATCH_NORM_MOMENTUM = 0.999  # 2.15's: Keras' 0.99 diverged on some problems
_BATCH_NORM_EPSILON = 1e-3


def _dense(net: tf.Tensor, units: int, name: str) -> tf.Tensor:
    """x @ kernel + bias in variable scope `name` (glorot-uniform kernel, zero bias)."""
    with tf.compat.v1.variable_scope(name):
        kernel = tf.compat.v1.get_variable("kernel", [net.shape[-1], units], tf.float32,
                                           tf.compat.v1.glorot_uniform_initializer())
        bias = tf.compat.v1.get_variable("bias", [units], tf.float32, tf.compat.v1.zeros_initializer())
        return tf.nn.bias_add(tf.matmul(net, kernel), bias)


def _batch_norm(net: tf.Tensor, name: str, training: bool) -> tuple[tf.Tensor, list]:
    """Batch normalisation over the batch axis; in training it also returns the moving statistics' updates."""
    units = net.shape[-1]
    with tf.compat.v1.variable_scope(name):
        gamma = tf.compat.v1.get_variable("gamma", [units], initializer=tf.compat.v1.ones_initializer())
        beta = tf.compat.v1.get_variable("beta", [units], initializer=tf.compat.v1.zeros_initializer())
        moving_mean = tf.compat.v1.get_variable("moving_mean", [units], initializer=tf.compat.v1.zeros_initializer(),
                                                trainable=False)
        moving_variance = tf.compat.v1.get_variable("moving_variance", [units], trainable=False,
                                                    initializer=tf.compat.v1.ones_initializer())
        if not training:
            return tf.nn.batch_normalization(net, moving_mean, moving_variance, beta, gamma,
                                             _BATCH_NORM_EPSILON), []
        mean, variance = tf.nn.moments(net, axes=[0])
        updates = [tf.compat.v1.assign_sub(moving, (moving - value) * (1.0 - _BATCH_NORM_MOMENTUM))
                   for moving, value in ((moving_mean, mean), (moving_variance, variance))]
        return tf.nn.batch_normalization(net, mean, variance, beta, gamma, _BATCH_NORM_EPSILON), updates


def dnn_logits(features: dict, mode: str, units: int, hidden_units: Sequence[int], feature_columns: tuple,
               activation_fn: Callable = tf.nn.relu, dropout: float | None = None,
               batch_norm: bool = False) -> tuple[tf.Tensor, list, list]:
    """(logits, trainable variables, batch-norm update ops) of a fully connected network under scope `dnn`:
    each hidden layer is dense + activation, then dropout (training only), then batch norm."""
    training = mode == ModeKeys.TRAIN
    updates: list = []
    with tf.compat.v1.variable_scope("dnn") as scope:
        net = dense_input(features, feature_columns)
        for index, width in enumerate(hidden_units):
            name = f"hiddenlayer_{index}"
            net = _dense(net, width, name)
            if activation_fn is not None:
                net = activation_fn(net)
            if dropout is not None and training:
                net = tf.nn.dropout(net, rate=dropout)
            if batch_norm:
                with tf.compat.v1.variable_scope(name):
                    net, layer_updates = _batch_norm(net, f"batchnorm_{index}", training)
                updates += layer_updates
            summaries.layer_summary(net, f"dnn/{name}")
        logits = _dense(net, units, "logits")
        summaries.layer_summary(logits, "dnn/logits")
        variables = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, scope=scope.name + "/")
    return logits, variables, updates

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
