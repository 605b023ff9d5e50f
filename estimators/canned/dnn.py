"""DNNClassifier, DNNRegressor and DNNEstimator: a fully connected network over feature columns (2.15's API), with
2.15's V2 builders (dnn_logit_fn_builder_v2, _dnn_model_fn_builder_v2, dnn_model_fn_v2) they are made of."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers, summaries
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.feature_columns import checked_columns
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
from estimators.canned.linear_model import check_v2_columns
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig

# 2.15's DNN (V2) resolved an optimizer name without a learning rate, so 'Adagrad' trained at Keras' own default,
# 0.001 (its V1 DNN used 0.05; 2.15's checkpoints hold training/Adagrad/learning_rate = 0.001).
LEARNING_RATE = None

_BATCH_NORM_MOMENTUM = 0.999  # 2.15's: Keras' 0.99 diverged on some problems
_BATCH_NORM_EPSILON = 1e-3


def _dense_features_class() -> type:
    """tf_keras' DenseFeatures, the input layer 2.15's DNN used (a Keras 2 layer: tf_keras is needed)."""
    try:
        import tf_keras
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("The DNN estimators read feature columns with Keras 2's DenseFeatures, as tf.estimator "
                          "2.15 did: install tf_keras (pip install 'tpu-estimators[legacy]', or pip install "
                          "--no-deps tf_keras).") from err
    return tf_keras.layers.DenseFeatures


def _check_units(units: Any) -> None:
    if isinstance(units, bool) or not isinstance(units, int):
        raise ValueError(f"units must be an int.  Given type: {type(units)}")


def _check_features(features: Any) -> None:
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")


def _input_layer(features: dict, feature_columns: Sequence, training: bool) -> tf.Tensor:
    """The network's input, `input_from_feature_columns/input_layer/...` in the current variable scope: a
    DenseFeatures layer over v2 feature columns, told whether it is training (2.15's ValueError for v1 ones)."""
    check_v2_columns(feature_columns)
    with tf.compat.v1.variable_scope("input_from_feature_columns"):
        layer = _dense_features_class()(feature_columns=list(feature_columns), name="input_layer")
        return layer(dict(features), training=training)


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


def _dnn_model_fn_builder_v2(units: int, hidden_units: Sequence[int], feature_columns: Sequence,
                             activation_fn: Callable | None, dropout: float | None, batch_norm: bool,
                             features: dict, mode: str) -> tuple[tf.Tensor, list, list]:
    """(logits, trainable variables, batch-norm update ops) of 2.15's DNN under variable scope `dnn`: each hidden
    layer `hiddenlayer_<i>` is dense + activation, then dropout (training only), then batch norm
    (`hiddenlayer_<i>/batchnorm_<i>`); each layer and the logits get 2.15's zero-fraction and activation summaries."""
    _check_units(units)
    training = mode == ModeKeys.TRAIN
    updates: list = []
    with tf.compat.v1.variable_scope("dnn") as scope:
        net = _input_layer(features, feature_columns, training)
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


def dnn_logit_fn_builder_v2(units: int, hidden_units: Sequence[int], feature_columns: Sequence,
                            activation_fn: Callable | None, dropout: float | None, batch_norm: bool) -> Callable:
    """2.15's dnn_logit_fn_builder_v2: a logit_fn(features, mode) returning the DNN's logits (v2 columns only)."""
    _check_units(units)

    def dnn_logit_fn(features, mode):
        return _dnn_model_fn_builder_v2(units, hidden_units, feature_columns, activation_fn, dropout, batch_norm,
                                        features, mode)[0]
    return dnn_logit_fn


def _train_op_fn(optimizer: Any, variables: list, loss_reduction: Any) -> Callable:
    """The DNN's training step: `optimizer` steps `variables` and counts the global step (a Keras 2 optimizer's
    iterations are the global step, as 2.15 set them in its model_fn; a tf.compat.v1 one is given it)."""
    global_step = tf.compat.v1.train.get_or_create_global_step()
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        return lambda loss: optimizer.minimize(loss, global_step=global_step, var_list=variables)
    optimizer.iterations = global_step

    def train_op_fn(loss):
        if loss_reduction == SUM_OVER_BATCH_SIZE:
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            if replicas > 1:
                loss *= 1.0 / replicas
        return tf.group(*optimizer.get_updates(loss, variables))
    return train_op_fn


def _estimator_spec(head: Head, features: dict, labels: Any, mode: str, hidden_units: Sequence[int],
                    feature_columns: Sequence, make_optimizer: Callable[[], Any], activation_fn: Callable | None,
                    dropout: float | None, batch_norm: bool, use_tpu: bool = False) -> Any:
    """The DNN's logits through `head`; in training stepped by the optimizer `make_optimizer` gives for this
    graph, through a train_op_fn (the head groups the batch-norm updates in)."""
    _check_features(features)
    logits, variables, updates = _dnn_model_fn_builder_v2(head.logits_dimension, hidden_units, feature_columns,
                                                          activation_fn, dropout, batch_norm, features, mode)
    train_op_fn = None
    if mode == ModeKeys.TRAIN:
        train_op_fn = _train_op_fn(make_optimizer(), variables, getattr(head, "loss_reduction", None))
    create = head._create_tpu_estimator_spec if use_tpu else head.create_estimator_spec  # noqa: SLF001
    return create(features=features, mode=mode, labels=labels, logits=logits, train_op_fn=train_op_fn,
                  update_ops=updates)


def dnn_model_fn_v2(features: dict, labels: Any, mode: str, head: Head, hidden_units: Sequence[int],
                    feature_columns: Sequence, optimizer: Any = "Adagrad", activation_fn: Callable = tf.nn.relu,
                    dropout: float | None = None, config: RunConfig | None = None, use_tpu: bool = False,
                    batch_norm: bool = False) -> Any:
    """2.15's dnn_model_fn_v2: the DNN's EstimatorSpec from `head` (a name as `optimizer` trains at the Keras
    class's own default learning rate)."""
    del config
    return _estimator_spec(head, features, labels, mode, hidden_units, feature_columns,
                           lambda: optimizers.optimizer_instance(optimizer, LEARNING_RATE), activation_fn, dropout,
                           batch_norm, use_tpu)


def dnn_model_fn(head: Head, hidden_units: Sequence[int], feature_columns: tuple, optimizer: Any,
                 activation_fn: Callable, dropout: float | None, batch_norm: bool) -> Callable:
    """The estimators' model_fn: dnn_model_fn_v2 with `optimizer` checked once and made anew for each graph."""
    make_optimizer = optimizers.resolve(optimizer, LEARNING_RATE)

    def model_fn(features, labels, mode, config):
        del config
        return _estimator_spec(head, features, labels, mode, hidden_units, feature_columns, make_optimizer,
                               activation_fn, dropout, batch_norm)
    return model_fn


class DNNEstimator(CannedEstimator):
    """A DNN with any head (2.15: tf.estimator.DNNEstimator)."""

    def __init__(self, head: Head, hidden_units: Sequence[int], feature_columns: Any, model_dir: str | None = None,
                 optimizer: Any = "Adagrad", activation_fn: Callable = tf.nn.relu, dropout: float | None = None,
                 config: RunConfig | None = None, warm_start_from: Any = None, batch_norm: bool = False):
        columns = checked_columns(feature_columns, "feature_columns")
        if not columns:
            raise ValueError("feature_columns must not be empty.")
        if hidden_units is None:  # an empty list is 2.15's logits layer alone
            raise ValueError("hidden_units must be a list of layer widths (empty for the logits layer alone).")
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
