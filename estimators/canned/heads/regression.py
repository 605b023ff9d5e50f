"""RegressionHead and PoissonRegressionHead: label_dimension real targets, squared error (or Poisson loss on
exp(logits)), average_loss and the means of labels and predictions, the regression signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.canned.heads import keys
from estimators.canned.heads.base import Head, labels_like_logits, weighted_mean
from estimators.export.outputs import PredictOutput, RegressionOutput


class RegressionHead(Head):
    """Real-valued targets (2.15: tf.estimator.RegressionHead); `inverse_link_fn` maps logits to predictions."""

    def __init__(self, label_dimension: int = 1, weight_column: Any = None,
                 loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE, loss_fn: Callable | None = None,
                 inverse_link_fn: Callable | None = None, name: str | None = None):
        super().__init__(weight_column, loss_reduction, name)
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        self.logits_dimension = label_dimension
        self._loss_fn = loss_fn
        self._inverse_link_fn = inverse_link_fn

    def _processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        return tf.cast(labels_like_logits(labels, logits, self.logits_dimension), tf.float32)

    def _unreduced_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        if self._loss_fn is not None:
            return tf.cast(self._loss_fn(labels=labels, logits=logits), tf.float32)
        return tf.math.squared_difference(logits, labels)

    def predictions(self, logits: tf.Tensor, keys_wanted: list[str] | None = None) -> dict:
        with tf.name_scope("predictions"):
            if self._inverse_link_fn is None:
                result = {keys.PREDICTIONS: tf.identity(logits, name=keys.PREDICTIONS)}
            else:
                result = {keys.PREDICTIONS: self._inverse_link_fn(logits), keys.LOGITS: logits}
        return {k: v for k, v in result.items() if keys_wanted is None or k in keys_wanted}

    def _eval_metrics(self, labels: tf.Tensor, logits: tf.Tensor, predictions: dict, unreduced: tf.Tensor,
                      weights: Any) -> dict:
        return {self._summary_key(keys.LOSS_MEAN): weighted_mean(unreduced, weights),
                self._summary_key(keys.PREDICTION_MEAN): weighted_mean(predictions[keys.PREDICTIONS], weights),
                self._summary_key(keys.LABEL_MEAN): weighted_mean(labels, weights)}

    def _export_outputs(self, predictions: dict) -> dict:
        regression = RegressionOutput(value=predictions[keys.PREDICTIONS])
        return {keys.SERVING_DEFAULT: regression, keys.REGRESS: regression, keys.PREDICT: PredictOutput(predictions)}


def _poisson_loss(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    return tf.nn.log_poisson_loss(targets=labels, log_input=logits, compute_full_loss=True)


class PoissonRegressionHead(RegressionHead):
    """Counts: log-Poisson loss on the logits (full loss, with Stirling's term), predictions exp(logits)."""

    def __init__(self, label_dimension: int = 1, weight_column: Any = None,
                 loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE, compute_full_loss: bool = True,
                 name: str | None = None):
        loss_fn = _poisson_loss if compute_full_loss else (
            lambda labels, logits: tf.nn.log_poisson_loss(labels, logits, compute_full_loss=False))
        super().__init__(label_dimension, weight_column, loss_reduction, loss_fn, tf.exp, name)
