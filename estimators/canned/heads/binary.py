"""BinaryClassHead: one logit per example, sigmoid cross-entropy, 2.15's binary metrics and signatures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import keys
from estimators.canned.heads.base import Head, labels_like_logits, weighted_mean
from estimators.canned.heads.classes import check_vocabulary, class_ids, class_names, ids_to_names, tiled
from estimators.export.outputs import ClassificationOutput, PredictOutput, RegressionOutput


class BinaryClassHead(Head):
    """Two classes from one logit (2.15: tf.estimator.BinaryClassHead)."""

    logits_dimension = 1

    def __init__(self, weight_column: Any = None, thresholds: Sequence[float] | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE, name: str | None = None):
        super().__init__(weight_column, loss_reduction, name)
        check_vocabulary(label_vocabulary, 2)
        for threshold in thresholds or ():
            if not 0.0 < threshold < 1.0:
                raise ValueError(f"thresholds must be in (0, 1) range. Given: {threshold}")
        self._thresholds = tuple(thresholds or ())
        self._label_vocabulary = label_vocabulary

    def _processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        """float32 labels in [0, 1]: vocabulary strings as 0/1, numbers (soft labels too) checked to lie in range."""
        labels = labels_like_logits(labels, logits, 1)
        if self._label_vocabulary is not None or labels.dtype == tf.string:
            return tf.cast(class_ids(labels, 2, self._label_vocabulary), tf.float32)
        labels = tf.cast(labels, tf.float32)
        checks = [tf.debugging.assert_non_negative(labels, message="Labels must be >= 0"),
                  tf.debugging.assert_less_equal(labels, 1.0, message="Labels must be <= n_classes - 1")]
        with tf.control_dependencies(checks):
            return tf.identity(labels)

    def _unreduced_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def predictions(self, logits: tf.Tensor, keys_wanted: list[str] | None = None) -> dict:
        with tf.name_scope("predictions"):
            logistic = tf.sigmoid(logits, name="logistic")
            two_class_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1, name="two_class_logits")
            probabilities = tf.nn.softmax(two_class_logits, name="probabilities")
            ids = tf.expand_dims(tf.argmax(two_class_logits, axis=-1), -1, name="class_ids")
            all_ids = tiled(tf.range(2), logits)
            result = {keys.LOGITS: logits, keys.LOGISTIC: logistic, keys.PROBABILITIES: probabilities,
                      keys.CLASS_IDS: ids, keys.CLASSES: ids_to_names(ids, 2, self._label_vocabulary),
                      keys.ALL_CLASS_IDS: all_ids, keys.ALL_CLASSES: tiled(class_names(2, self._label_vocabulary),
                                                                           logits)}
        return {k: v for k, v in result.items() if keys_wanted is None or k in keys_wanted}

    def _eval_metrics(self, labels: tf.Tensor, logits: tf.Tensor, predictions: dict, unreduced: tf.Tensor,
                      weights: Any) -> dict:
        w = None if isinstance(weights, float) else weights
        float_labels = labels
        logistic = predictions[keys.LOGISTIC]
        metrics = {
            self._summary_key(keys.LOSS_MEAN): weighted_mean(unreduced, weights),
            self._summary_key(keys.ACCURACY): tf.compat.v1.metrics.accuracy(labels, predictions[keys.CLASS_IDS], w),
            self._summary_key(keys.PRECISION): tf.compat.v1.metrics.precision(labels, predictions[keys.CLASS_IDS], w),
            self._summary_key(keys.RECALL): tf.compat.v1.metrics.recall(labels, predictions[keys.CLASS_IDS], w),
            self._summary_key(keys.PREDICTION_MEAN): weighted_mean(logistic, weights),
            self._summary_key(keys.AUC): tf.compat.v1.metrics.auc(float_labels, logistic, w, curve="ROC",
                                                                  summation_method="careful_interpolation"),
            self._summary_key(keys.AUC_PR): tf.compat.v1.metrics.auc(float_labels, logistic, w, curve="PR",
                                                                     summation_method="careful_interpolation"),
        }
        label_mean = weighted_mean(float_labels, weights)
        metrics[self._summary_key(keys.LABEL_MEAN)] = label_mean
        value, update = label_mean
        metrics[self._summary_key(keys.ACCURACY_BASELINE)] = (tf.maximum(value, 1.0 - value),
                                                              tf.maximum(update, 1.0 - update))
        for threshold in self._thresholds:
            above = tf.cast(logistic >= threshold, tf.int64)
            metrics[self._summary_key(f"accuracy/positive_threshold_{threshold:g}")] = \
                tf.compat.v1.metrics.accuracy(labels, above, w)
            metrics[self._summary_key(f"precision/positive_threshold_{threshold:g}")] = \
                _first(tf.compat.v1.metrics.precision_at_thresholds(float_labels, logistic, [threshold], w))
            metrics[self._summary_key(f"recall/positive_threshold_{threshold:g}")] = \
                _first(tf.compat.v1.metrics.recall_at_thresholds(float_labels, logistic, [threshold], w))
        return metrics

    def _export_outputs(self, predictions: dict) -> dict:
        classification = ClassificationOutput(scores=predictions[keys.PROBABILITIES],
                                              classes=predictions[keys.ALL_CLASSES])
        return {keys.SERVING_DEFAULT: classification, keys.CLASSIFY: classification,
                keys.REGRESS: RegressionOutput(value=predictions[keys.LOGISTIC]),
                keys.PREDICT: PredictOutput(predictions)}


def _first(metric: tuple) -> tuple:
    """A one-threshold metric's (value, update) as scalars."""
    value, update = metric
    return value[0], update[0]
