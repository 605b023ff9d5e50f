"""RegressionHead, PoissonRegressionHead and LogisticRegressionHead: label_dimension real targets, squared error
(or a loss_fn), average_loss and the means of labels and predictions, the regression signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.canned.heads import base, checks, keys
from estimators.canned.heads import metrics as head_metrics
from estimators.canned.metric_keys import MetricKeys as MK
from estimators.canned.prediction_keys import PredictionKeys as PK
from estimators.export.outputs import PredictOutput, RegressionOutput


class RegressionHead(base.SingleHead):
    """Real-valued targets (2.15: tf.estimator.RegressionHead); `inverse_link_fn` maps logits to predictions,
    `loss_fn(labels, logits[, features])` replaces the squared error; weights may be per example or per logit."""

    def __init__(self, label_dimension: int = 1, weight_column: Any = None,
                 loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE, loss_fn: Callable | None = None,
                 inverse_link_fn: Callable | None = None, name: str | None = None):
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        base.validate_loss_reduction(loss_reduction)
        if loss_fn:
            checks.validate_loss_fn_args(loss_fn)
        self._logits_dimension = label_dimension
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._inverse_link_fn = inverse_link_fn
        self._name = name

    @property
    def logits_dimension(self) -> int:
        return self._logits_dimension

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        labels = checks.check_dense_labels_match_logits_and_reshape(labels, logits, self._logits_dimension)
        return tf.cast(labels, tf.float32)

    def _unweighted_loss_and_weights(self, logits: tf.Tensor, labels: tf.Tensor, features: dict) -> tuple:
        if self._loss_fn:
            unweighted = checks.call_loss_fn(self._loss_fn, labels, logits, features,
                                             expected_loss_dim=self._logits_dimension)
        else:
            unweighted = tf.compat.v1.losses.mean_squared_error(labels=labels, predictions=logits,
                                                                reduction=tf.compat.v1.losses.Reduction.NONE)
        weights = checks.get_weights_and_check_match_logits(features, self._weight_column, logits,
                                                            allow_per_logit_weights=True)
        return unweighted, weights

    def predictions(self, logits: Any, keys: Any = None) -> dict:  # noqa: A002 - the other heads' name
        """{'predictions': inverse_link_fn(logits) or the logits, 'logits' too when there is an inverse link}."""
        del keys
        logits = checks.check_logits_final_dim(logits, self._logits_dimension)
        with tf.name_scope("predictions"):
            if self._inverse_link_fn:
                return {_PREDICTIONS: self._inverse_link_fn(logits), _LOGITS: logits}
            return {_PREDICTIONS: logits}

    def metrics(self, regularization_losses: Any = None) -> dict:
        """2.15's metric objects: means of the loss, predictions and labels (and of the regularization loss)."""
        m = head_metrics.keras_metrics()
        with tf.name_scope("metrics"):
            result = {self._summary_key(name): m.Mean(name=name)
                      for name in (MK.LOSS_MEAN, MK.PREDICTION_MEAN, MK.LABEL_MEAN)}
            if regularization_losses is not None:
                result[self._summary_key(MK.LOSS_REGULARIZATION)] = m.Mean(name=MK.LOSS_REGULARIZATION)
        return result

    def update_metrics(self, eval_metrics: dict, features: dict, logits: Any, labels: Any,
                       regularization_losses: Any = None) -> dict:
        """Updates metrics() objects with this batch; returns them."""
        predicted = self.predictions(logits)[_PREDICTIONS]
        logits = checks.check_logits_final_dim(logits, self._logits_dimension)
        labels = self._processed_labels(logits, labels)
        unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features or {})
        eval_metrics[self._summary_key(MK.LOSS_MEAN)].update_state(values=unweighted, sample_weight=weights)
        eval_metrics[self._summary_key(MK.LABEL_MEAN)].update_state(values=labels, sample_weight=weights)
        head_metrics.update_with_broadcast_weights(eval_metrics[self._summary_key(MK.PREDICTION_MEAN)], predicted,
                                                   weights)
        head_metrics.add_regularization(eval_metrics, self._summary_key(MK.LOSS_REGULARIZATION),
                                        regularization_losses)
        return eval_metrics

    def _export_outputs(self, predictions: dict) -> dict:
        regression = RegressionOutput(value=predictions[_PREDICTIONS])
        return {keys.SERVING_DEFAULT: regression, keys.REGRESS: regression, keys.PREDICT: PredictOutput(predictions)}


_PREDICTIONS = PK.PREDICTIONS
_LOGITS = PK.LOGITS


class PoissonRegressionHead(RegressionHead):
    """Counts: log-Poisson loss on the logits (with Stirling's term unless compute_full_loss=False), predictions
    exp(logits) (2.15: tf.estimator.PoissonRegressionHead)."""

    def __init__(self, label_dimension: int = 1, weight_column: Any = None,
                 loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE, compute_full_loss: bool = True,
                 name: str | None = None):
        self._compute_full_loss = compute_full_loss
        super().__init__(label_dimension, weight_column, loss_reduction, self._poisson_loss, tf.math.exp, name)

    def _poisson_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.log_poisson_loss(targets=labels, log_input=logits, compute_full_loss=self._compute_full_loss)


class LogisticRegressionHead(RegressionHead):
    """Targets in [0, 1]: sigmoid cross-entropy on one logit, predictions sigmoid(logits) (2.15:
    tf.estimator.LogisticRegressionHead)."""

    def __init__(self, weight_column: Any = None, loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE,
                 name: str | None = None):
        super().__init__(1, weight_column, loss_reduction, self._logistic_loss, tf.math.sigmoid, name)

    def _logistic_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        labels = checks.check_label_range(labels, n_classes=2, message="Labels must be in range [0, 1]")
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
