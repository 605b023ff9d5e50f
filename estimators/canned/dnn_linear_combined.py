"""DNNLinearCombinedClassifier / Regressor / Estimator: wide (linear) and deep (DNN) logits summed, each part
trained by its own optimizer (2.15's API: FTRL for the linear part, Adagrad for the DNN), and 2.15's
_dnn_linear_combined_model_fn_v2 they run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned import optimizers, summaries
from estimators.canned.dnn import _dnn_model_fn_builder_v2
from estimators.canned.estimator_base import CannedEstimator
from estimators.canned.feature_columns import checked_columns
from estimators.canned.head_choice import checked_head, classifier_head, regressor_head
from estimators.canned.heads import Head
from estimators.canned.heads.keys import SUM_OVER_BATCH_SIZE
from estimators.canned.linear import default_learning_rate, linear_logits
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig

DNN_LEARNING_RATE = 0.001  # 2.15's defaults for the two parts (historical values kept by tf.estimator)
LINEAR_LEARNING_RATE = 0.005


def _made(make: Callable[[], Any]) -> Any:
    """One part's optimizer for this graph: a Keras 2 optimizer (it is stepped with get_updates, as in 2.15)."""
    optimizer = make()
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        raise ValueError(f"The given object is not a tf.keras.optimizers.Optimizer instance. Given: {optimizer}")
    return optimizer


def _combined_spec(features: Any, labels: Any, mode: str, head: Head, linear_columns: Sequence,
                   make_linear: Callable[[], Any], dnn_columns: Sequence, make_dnn: Callable[[], Any],
                   hidden_units: Sequence[int] | None, activation_fn: Callable | None, dropout: float | None,
                   batch_norm: bool, sparse_combiner: str, loss_reduction: Any) -> Any:
    """The combined logits through `head` with a train_op_fn stepping both optimizers. The global step is the DNN
    optimizer's iteration count (the linear one's when there is no DNN part); the other optimizer keeps its own
    `iter`, as in 2.15's checkpoints."""
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
    if not linear_columns and not dnn_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    train = mode == ModeKeys.TRAIN
    parts = []  # (logits, variables, update ops, optimizer)
    if dnn_columns:
        dnn_optimizer = _made(make_dnn) if train else None
        if not hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is specified.")
        parts.append((*_dnn_model_fn_builder_v2(head.logits_dimension, hidden_units, dnn_columns, activation_fn,
                                                dropout, batch_norm, features, mode), dnn_optimizer))
    if linear_columns:
        linear_optimizer = _made(make_linear) if train else None
        logits, variables = linear_logits(features, head.logits_dimension, linear_columns, sparse_combiner)
        summaries.layer_summary(logits, "linear")
        parts.append((logits, variables, [], linear_optimizer))
    logits = parts[0][0] if len(parts) == 1 else tf.add(parts[0][0], parts[1][0])
    train_op_fn = None
    if train:
        parts[0][3].iterations = tf.compat.v1.train.get_or_create_global_step()

        def train_op_fn(loss):
            if loss_reduction == SUM_OVER_BATCH_SIZE:
                replicas = tf.distribute.get_strategy().num_replicas_in_sync
                if replicas > 1:
                    loss *= 1.0 / replicas
            ops = []
            for _, variables, updates, optimizer in parts:
                ops += optimizer.get_updates(loss, variables)
                ops += updates
            return tf.group(*ops)
    return head.create_estimator_spec(features=features, mode=mode, logits=logits, labels=labels,
                                      train_op_fn=train_op_fn)


def _dnn_linear_combined_model_fn_v2(features: Any, labels: Any, mode: str, head: Head,
                                     linear_feature_columns: Sequence | None = None, linear_optimizer: Any = "Ftrl",
                                     dnn_feature_columns: Sequence | None = None, dnn_optimizer: Any = "Adagrad",
                                     dnn_hidden_units: Sequence[int] | None = None,
                                     dnn_activation_fn: Callable = tf.nn.relu, dnn_dropout: float | None = None,
                                     config: RunConfig | None = None, batch_norm: bool = False,
                                     linear_sparse_combiner: str = "sum",
                                     loss_reduction: Any = SUM_OVER_BATCH_SIZE) -> Any:
    """2.15's _dnn_linear_combined_model_fn_v2: the wide & deep EstimatorSpec from `head` (optimizer names train
    at 2.15's default learning rates)."""
    del config
    linear_columns = list(linear_feature_columns or ())
    dnn_columns = list(dnn_feature_columns or ())
    linear_rate = default_learning_rate(len(linear_columns), LINEAR_LEARNING_RATE) if linear_columns else None
    return _combined_spec(features, labels, mode, head, linear_columns,
                          lambda: optimizers.optimizer_instance(linear_optimizer, linear_rate), dnn_columns,
                          lambda: optimizers.optimizer_instance(dnn_optimizer, DNN_LEARNING_RATE), dnn_hidden_units,
                          dnn_activation_fn, dnn_dropout, batch_norm, linear_sparse_combiner, loss_reduction)


def combined_model_fn(head: Head, linear_columns: tuple, linear_optimizer: Any, dnn_columns: tuple,
                      dnn_optimizer: Any, hidden_units: Sequence[int] | None, activation_fn: Callable,
                      dropout: float | None, batch_norm: bool, sparse_combiner: str,
                      loss_reduction: Any = SUM_OVER_BATCH_SIZE) -> Callable:
    """The estimators' model_fn: _dnn_linear_combined_model_fn_v2 with both optimizers checked once and made anew
    for each graph."""
    make_dnn = optimizers.resolve(dnn_optimizer, DNN_LEARNING_RATE) if dnn_columns else None
    make_linear = (optimizers.resolve(linear_optimizer, default_learning_rate(len(linear_columns),
                                                                              LINEAR_LEARNING_RATE))
                   if linear_columns else None)

    def model_fn(features, labels, mode, config):
        del config
        return _combined_spec(features, labels, mode, head, linear_columns, make_linear, dnn_columns, make_dnn,
                              hidden_units, activation_fn, dropout, batch_norm, sparse_combiner, loss_reduction)
    return model_fn


class DNNLinearCombinedEstimator(CannedEstimator):
    """Wide & deep with any head (2.15: tf.estimator.DNNLinearCombinedEstimator)."""

    def __init__(self, head: Head, model_dir: str | None = None, linear_feature_columns: Any = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Any = None, dnn_optimizer: Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None, dnn_activation_fn: Callable = tf.nn.relu,
                 dnn_dropout: float | None = None, config: RunConfig | None = None, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum", warm_start_from: Any = None):
        linear_columns = checked_columns(linear_feature_columns, "linear_feature_columns")
        dnn_columns = checked_columns(dnn_feature_columns, "dnn_feature_columns")
        if not linear_columns and not dnn_columns:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
        if dnn_columns and not dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is specified.")
        if linear_sparse_combiner not in ("sum", "mean", "sqrtn"):
            raise ValueError(f"linear_sparse_combiner must be one of 'sum', 'mean', 'sqrtn', got "
                             f"{linear_sparse_combiner!r}.")
        self._head = checked_head(head)
        model_fn = combined_model_fn(self._head, linear_columns, linear_optimizer, dnn_columns, dnn_optimizer,
                                     tuple(dnn_hidden_units or ()), dnn_activation_fn, dnn_dropout, batch_norm,
                                     linear_sparse_combiner, getattr(self, "_train_loss_reduction",
                                                                     SUM_OVER_BATCH_SIZE))
        super().__init__(model_fn, model_dir, config, warm_start_from)


class DNNLinearCombinedClassifier(DNNLinearCombinedEstimator):
    """Wide & deep classifier (2.15: tf.estimator.DNNLinearCombinedClassifier)."""

    def __init__(self, model_dir: str | None = None, linear_feature_columns: Any = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Any = None, dnn_optimizer: Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None, dnn_activation_fn: Callable = tf.nn.relu,
                 dnn_dropout: float | None = None, n_classes: int = 2, weight_column: Any = None,
                 label_vocabulary: Sequence[str] | None = None, config: RunConfig | None = None,
                 warm_start_from: Any = None, loss_reduction: Any = SUM_OVER_BATCH_SIZE, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum"):
        head = classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        self._train_loss_reduction = loss_reduction  # 2.15 scaled the loss over replicas by it (default elsewhere)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
                         dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, batch_norm,
                         linear_sparse_combiner, warm_start_from)


class DNNLinearCombinedRegressor(DNNLinearCombinedEstimator):
    """Wide & deep regressor (2.15: tf.estimator.DNNLinearCombinedRegressor)."""

    def __init__(self, model_dir: str | None = None, linear_feature_columns: Any = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Any = None, dnn_optimizer: Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None, dnn_activation_fn: Callable = tf.nn.relu,
                 dnn_dropout: float | None = None, label_dimension: int = 1, weight_column: Any = None,
                 config: RunConfig | None = None, warm_start_from: Any = None,
                 loss_reduction: Any = SUM_OVER_BATCH_SIZE, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum"):
        head = regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
                         dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, batch_norm,
                         linear_sparse_combiner, warm_start_from)
