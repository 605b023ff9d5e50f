"""MultiLabelHead: n_classes independent yes/no labels per example, sigmoid cross-entropy averaged over the classes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import keys
from estimators.canned.heads.base import Head, weighted_mean
from estimators.canned.heads.classes import check_vocabulary, class_names, tiled
from estimators.export.outputs import ClassificationOutput, PredictOutput


class MultiLabelHead(Head):
    """Labels are a multi-hot [batch, n_classes] tensor, or class ids / vocabulary strings as a SparseTensor or a
    padded dense tensor (2.15: tf.estimator.MultiLabelHead)."""

    def __init__(self, n_classes: int, weight_column: Any = None, thresholds: Sequence[float] | None = None,
                 label_vocabulary: Sequence[str] | None = None, loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE,
                 name: str | None = None):
        super().__init__(weight_column, loss_reduction, name)
        if n_classes is None or n_classes < 2:
            raise ValueError(f"n_classes must be > 1 for multi-label classification. Given: {n_classes}")
        check_vocabulary(label_vocabulary, n_classes)
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary
        self._thresholds = tuple(thresholds or ())
        self.logits_dimension = n_classes

    def _processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        if labels is None:
            raise ValueError("You must provide a labels Tensor. Given: None.")
        if isinstance(labels, tf.SparseTensor) or (self._label_vocabulary is not None):
            sparse = labels if isinstance(labels, tf.SparseTensor) else tf.sparse.from_dense(labels)
            values = sparse.values
            if self._label_vocabulary is not None:
                table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
                    list(self._label_vocabulary), tf.range(self._n_classes, dtype=tf.int64)), -1)
                values = table.lookup(values)
            ids = tf.SparseTensor(sparse.indices, tf.cast(values, tf.int64), sparse.dense_shape)
            return tf.cast(tf.sparse.to_indicator(ids, self._n_classes), tf.int64)
        labels = tf.convert_to_tensor(labels)
        if labels.shape.rank == 1:
            labels = tf.expand_dims(labels, -1)
        return tf.cast(labels, tf.int64)

    def _unreduced_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(labels, tf.float32), logits=logits)
        return tf.reduce_mean(loss, axis=-1, keepdims=True)

    def predictions(self, logits: tf.Tensor, keys_wanted: list[str] | None = None) -> dict:
        with tf.name_scope("predictions"):
            # `classes` holds every class name, as 2.15's multi-label predictions did (no class ids here).
            result = {keys.LOGITS: logits, keys.PROBABILITIES: tf.sigmoid(logits, name="probabilities"),
                      keys.CLASSES: tiled(class_names(self._n_classes, self._label_vocabulary), logits)}
        return {k: v for k, v in result.items() if keys_wanted is None or k in keys_wanted}

    def _eval_metrics(self, labels: tf.Tensor, logits: tf.Tensor, predictions: dict, unreduced: tf.Tensor,
                      weights: Any) -> dict:
        w = None if isinstance(weights, float) else weights * tf.ones_like(logits)
        probabilities = predictions[keys.PROBABILITIES]
        metrics = {
            self._summary_key(keys.LOSS_MEAN): weighted_mean(unreduced, weights),
            self._summary_key(keys.AUC): tf.compat.v1.metrics.auc(labels, probabilities, w, curve="ROC",
                                                                  summation_method="careful_interpolation"),
            self._summary_key(keys.AUC_PR): tf.compat.v1.metrics.auc(labels, probabilities, w, curve="PR",
                                                                     summation_method="careful_interpolation"),
        }
        for threshold in self._thresholds:
            above = tf.cast(probabilities >= threshold, tf.int64)
            metrics[self._summary_key(f"accuracy/positive_threshold_{threshold:g}")] = \
                tf.compat.v1.metrics.accuracy(labels, above, w)
        return metrics

    def _export_outputs(self, predictions: dict) -> dict:
        classification = ClassificationOutput(scores=predictions[keys.PROBABILITIES],
                                              classes=predictions[keys.CLASSES])
        return {keys.SERVING_DEFAULT: classification, keys.CLASSIFY: classification,
                keys.PREDICT: PredictOutput(predictions)}
