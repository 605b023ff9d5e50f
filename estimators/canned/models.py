"""The networks canned estimators build in a TF1 graph, with 2.15's variable names: a DNN over
`input_layer`'s dense input (`dnn/hiddenlayer_<i>/kernel`, `dnn/logits/bias`), a linear model
(`linear/linear_model/<column>/weights`, `linear/linear_model/bias_weights`) and a per-output bias
(`baseline/bias`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import tensorflow as tf

from estimators.canned import summaries
from estimators.canned.feature_columns import batch_size_of, dense_input
from estimators.mode_keys import ModeKeys

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


def baseline_logits(features: dict, units: int) -> tuple[tf.Tensor, list]:
    """(logits, [bias]): the same learned bias for every example, `baseline/bias`."""
    with tf.compat.v1.variable_scope("baseline"):
        bias = tf.compat.v1.get_variable("bias", [units], tf.float32, tf.compat.v1.zeros_initializer())
    logits = bias * tf.ones(tf.stack([batch_size_of(features), units]))
    return logits, [bias]
