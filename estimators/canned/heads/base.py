"""What every head shares: labels and weights shaped like the logits, the reduced training loss, the train op and
the EstimatorSpec for each mode, as tf.estimator 2.15's V2 heads built them in a TF1 graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.canned.heads import keys
from estimators.mode_keys import ModeKeys
from estimators.specs import EstimatorSpec


def weights_from(features: dict, weight_column: Any, logits: tf.Tensor) -> tf.Tensor | float:
    """The example weights, float32 [batch, 1] (or 1.0 without a weight column): a feature's key or a
    numeric_column naming it."""
    if weight_column is None:
        return 1.0
    key = weight_column if isinstance(weight_column, str) else getattr(weight_column, "key", None)
    if key is None:
        raise TypeError(f"weight_column must be a string or a numeric_column, got {type(weight_column).__name__}.")
    if key not in features:
        raise ValueError(f"weight_column {key!r} is not among the features ({sorted(features)}).")
    weights = features[key]
    if isinstance(weights, tf.SparseTensor):
        raise ValueError(f"weight_column {key!r} must be dense, got a SparseTensor.")
    weights = tf.cast(weights, tf.float32)
    if weights.shape.rank == 1:
        weights = tf.expand_dims(weights, -1)
    if not isinstance(weight_column, str) and getattr(weight_column, "normalizer_fn", None) is not None:
        weights = weight_column.normalizer_fn(weights)
    return weights


def labels_like_logits(labels: Any, logits: tf.Tensor, label_dimension: int) -> tf.Tensor:
    """`labels` as a dense [batch, label_dimension] tensor (a [batch] vector gets its last axis), checked against
    the logits' batch; None is refused with 2.15's message."""
    if labels is None:
        raise ValueError("You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: Check "
                         "that your data contain your label feature. Check that your input_fn properly parses and "
                         "returns labels.")
    if isinstance(labels, dict):
        raise ValueError(f"labels must be a Tensor for a single head, got a dict with keys {sorted(labels)}.")
    if isinstance(labels, tf.SparseTensor):
        labels = tf.sparse.to_dense(labels, default_value="" if labels.dtype == tf.string else 0)
    labels = tf.convert_to_tensor(labels)
    if labels.shape.rank == 1:
        labels = tf.expand_dims(labels, -1)
    if labels.shape.rank is not None and labels.shape.rank != 2:
        raise ValueError(f"labels shape must be [batch_size, {label_dimension}], got {labels.shape}.")
    if labels.shape[-1] is not None and labels.shape[-1] != label_dimension:
        raise ValueError(f"Mismatched label shape. Expected labels dimension={label_dimension}. Received "
                         f"{labels.shape[-1]}. Suggested Fix: If your classifier expects one-hot encoding label, "
                         "check your n_classes argument to the estimator and/or the shape of your label.")
    check = tf.debugging.assert_equal(tf.shape(labels)[0], tf.shape(logits)[0],
                                      message="labels and logits must have the same batch size")
    with tf.control_dependencies([check]):
        return tf.identity(labels)


def reduce_loss(unreduced: tf.Tensor, weights: Any, reduction: str) -> tf.Tensor:
    """The training loss: the weighted sum, divided by the number of loss elements under SUM_OVER_BATCH_SIZE."""
    weighted = unreduced * tf.cast(weights, unreduced.dtype) if weights is not None else unreduced
    weighted = weighted * tf.ones_like(unreduced)  # weights broadcast to the loss's shape
    total = tf.reduce_sum(weighted)
    if reduction == keys.SUM:
        return total
    return tf.math.divide_no_nan(total, tf.cast(tf.size(unreduced), total.dtype))


def train_op_from(loss: tf.Tensor, optimizer: Any = None, trainable_variables: Any = None,
                  train_op_fn: Callable | None = None, update_ops: Any = None) -> tf.Operation:
    """2.15's training step: a Keras-2 optimizer's get_updates on `trainable_variables` (its iterations are the
    global step, so no separate counter is saved), a tf.compat.v1 optimizer's minimize, or train_op_fn(loss);
    `update_ops` (batch-norm statistics) are grouped in."""
    if (optimizer is None) == (train_op_fn is None):
        raise ValueError("Exactly one of optimizer and train_op_fn must be set in TRAIN mode.")
    global_step = tf.compat.v1.train.get_or_create_global_step()
    with tf.name_scope("training"):
        if optimizer is None:
            train_op = train_op_fn(loss)
        elif trainable_variables is None:
            raise ValueError("trainable_variables cannot be None when an optimizer is given.")
        elif isinstance(optimizer, tf.compat.v1.train.Optimizer):
            train_op = optimizer.minimize(loss, global_step=global_step, var_list=list(trainable_variables))
        else:
            optimizer.iterations = global_step
            train_op = optimizer.get_updates(loss, list(trainable_variables))[0]
    if update_ops:
        train_op = tf.group(train_op, *update_ops)
    return train_op


class Head:
    """A head turns logits into the loss, predictions, metrics and export signatures for a mode."""

    logits_dimension: int = 1

    def __init__(self, weight_column: Any = None, loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE,
                 name: str | None = None):
        self._weight_column = weight_column
        self._loss_reduction = keys.loss_reduction(loss_reduction)
        self._name = name

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def loss_reduction(self) -> str:
        return self._loss_reduction

    # -- what each head defines ------------------------------------------------------------------
    def _processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def _unreduced_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def predictions(self, logits: tf.Tensor, keys: list[str] | None = None) -> dict:
        raise NotImplementedError

    def _eval_metrics(self, labels: tf.Tensor, logits: tf.Tensor, predictions: dict, unreduced: tf.Tensor,
                      weights: Any) -> dict:
        raise NotImplementedError

    def _export_outputs(self, predictions: dict) -> dict:
        raise NotImplementedError

    # -- shared ------------------------------------------------------------------------------------
    def _summary_key(self, key: str) -> str:
        return f"{key}/{self._name}" if self._name else key

    def _weighted_unreduced(self, labels: Any, logits: tf.Tensor, features: dict) -> tuple:
        logits = tf.convert_to_tensor(logits, tf.float32)
        processed = self._processed_labels(labels, logits)
        unreduced = self._unreduced_loss(processed, logits)
        return processed, unreduced, weights_from(features, self._weight_column, logits)

    def loss(self, labels: Any, logits: tf.Tensor, features: dict | None = None, mode: str | None = None,
             regularization_losses: Any = None) -> tf.Tensor:
        """The reduced training loss, plus the regularization losses (what 2.15's head.loss returned)."""
        del mode
        _, unreduced, weights = self._weighted_unreduced(labels, logits, features or {})
        loss = reduce_loss(unreduced, weights, self._loss_reduction)
        if regularization_losses:
            loss = loss + tf.add_n([tf.cast(r, loss.dtype) for r in regularization_losses])
        return loss

    def metrics(self, *args: Any, **kwargs: Any) -> dict:
        raise NotImplementedError("Heads here build tf.compat.v1 metric ops in create_estimator_spec (graph path).")

    def create_estimator_spec(self, features: dict, mode: str, logits: tf.Tensor, labels: Any = None,
                              optimizer: Any = None, trainable_variables: Any = None,
                              train_op_fn: Callable | None = None, update_ops: Any = None,
                              regularization_losses: Any = None) -> EstimatorSpec:
        """The EstimatorSpec for `mode`: predictions and export signatures in PREDICT; loss and metrics in EVAL;
        loss and the train op in TRAIN."""
        logits = tf.convert_to_tensor(logits, tf.float32)
        with tf.name_scope("head"):
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions, export_outputs=self._export_outputs(predictions))
            processed, unreduced, weights = self._weighted_unreduced(labels, logits, features)
            training_loss = reduce_loss(unreduced, weights, self._loss_reduction)
            loss = training_loss
            if regularization_losses:
                loss = tf.add_n([training_loss, *[tf.cast(r, tf.float32) for r in regularization_losses]])
            if mode == ModeKeys.EVAL:
                with tf.name_scope("metrics"):
                    metrics = self._eval_metrics(processed, logits, predictions, unreduced, weights)
                    if regularization_losses:
                        metrics["regularization_loss"] = tf.compat.v1.metrics.mean(loss - training_loss)
                return EstimatorSpec(mode, predictions=predictions, loss=loss, eval_metric_ops=metrics)
        train_op = train_op_from(loss, optimizer, trainable_variables, train_op_fn, update_ops)
        tf.compat.v1.summary.scalar(self._summary_key(keys.LOSS), loss)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


def weighted_mean(values: tf.Tensor, weights: Any) -> tuple:
    """tf.compat.v1.metrics.mean of `values`, each weighted by its example's weight."""
    values = tf.cast(values, tf.float32)
    if isinstance(weights, float):
        return tf.compat.v1.metrics.mean(values)
    return tf.compat.v1.metrics.mean(values, weights=weights * tf.ones_like(values))
