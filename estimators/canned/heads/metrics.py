"""The Keras 2 (tf_keras) metric objects 2.15's heads evaluated with, imported directly (not through tf.keras,
whatever TF_USE_LEGACY_KERAS says): their numbers (AUC's 200 thresholds, interpolation) are 2.15's."""

from __future__ import annotations

import functools
from typing import Any

import tensorflow as tf


def keras_metrics() -> Any:
    """tf_keras.metrics, with an error naming the install when tf_keras is missing."""
    try:
        import tf_keras
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("Heads evaluate with Keras 2 metrics, as tf.estimator 2.15 did: install tf_keras "
                          "(pip install 'tpu-estimators[legacy]', or pip install --no-deps tf_keras).") from err
    return tf_keras.metrics


def mean(name: str) -> Any:
    return keras_metrics().Mean(name=name)


@functools.cache
def _accuracy_baseline_class() -> type:
    class AccuracyBaseline(keras_metrics().Mean):
        """max(label mean, 1 - label mean) over the weighted labels seen so far."""

        def result(self) -> tf.Tensor:
            return tf.math.divide_no_nan(tf.maximum(self.total, self.count - self.total), self.count)

    return AccuracyBaseline


def accuracy_baseline(name: str) -> Any:
    """A Mean of the 0/1 labels whose result is the accuracy of always predicting the more frequent class (2.15
    derived it from label/mean's totals; the numbers are the same)."""
    return _accuracy_baseline_class()(name=name)


def update_with_broadcast_weights(metric: Any, values: tf.Tensor, weights: Any) -> None:
    """Updates a Mean with `values`, the weights broadcast to their shape."""
    values = tf.cast(values, tf.float32)
    if weights is not None:
        weights = tf.__internal__.ops.broadcast_weights(weights, values)
    metric.update_state(values=values, sample_weight=weights)


def update_auc(metric: Any, labels: tf.Tensor, predictions: tf.Tensor, weights: Any) -> None:
    """Updates an AUC (or any y_true / y_pred metric) with the weights broadcast to the predictions' shape."""
    predictions = tf.cast(predictions, tf.float32)
    if weights is not None:
        weights = tf.__internal__.ops.broadcast_weights(weights, predictions)
    metric.update_state(y_true=labels, y_pred=predictions, sample_weight=weights)


def add_regularization(eval_metrics: dict, key: str, regularization_losses: Any) -> None:
    if regularization_losses is not None:
        eval_metrics[key].update_state(values=tf.math.add_n(regularization_losses))
