"""MultiClassHead: n_classes logits, softmax cross-entropy on class ids, accuracy and the classification signature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import keys
from estimators.canned.heads.base import Head, labels_like_logits, weighted_mean
from estimators.canned.heads.classes import check_vocabulary, class_ids, class_names, ids_to_names, tiled
from estimators.export.outputs import ClassificationOutput, PredictOutput


class MultiClassHead(Head):
    """One of n_classes (> 2) classes per example (2.15: tf.estimator.MultiClassHead)."""

    def __init__(self, n_classes: int, weight_column: Any = None, label_vocabulary: Sequence[str] | None = None,
                 loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE, name: str | None = None):
        super().__init__(weight_column, loss_reduction, name)
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        check_vocabulary(label_vocabulary, n_classes)
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary
        self.logits_dimension = n_classes

    def _processed_labels(self, labels: Any, logits: tf.Tensor) -> tf.Tensor:
        labels = labels_like_logits(labels, logits, 1)
        return class_ids(labels, self._n_classes, self._label_vocabulary)

    def _unreduced_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.squeeze(labels, -1), logits=logits)
        return tf.expand_dims(loss, -1)

    def predictions(self, logits: tf.Tensor, keys_wanted: list[str] | None = None) -> dict:
        with tf.name_scope("predictions"):
            ids = tf.expand_dims(tf.argmax(logits, axis=-1), -1, name="class_ids")
            result = {keys.LOGITS: logits, keys.PROBABILITIES: tf.nn.softmax(logits, name="probabilities"),
                      keys.CLASS_IDS: ids, keys.CLASSES: ids_to_names(ids, self._n_classes, self._label_vocabulary),
                      keys.ALL_CLASS_IDS: tiled(tf.range(self._n_classes), logits),
                      keys.ALL_CLASSES: tiled(class_names(self._n_classes, self._label_vocabulary), logits)}
        return {k: v for k, v in result.items() if keys_wanted is None or k in keys_wanted}

    def _eval_metrics(self, labels: tf.Tensor, logits: tf.Tensor, predictions: dict, unreduced: tf.Tensor,
                      weights: Any) -> dict:
        w = None if isinstance(weights, float) else weights
        return {self._summary_key(keys.LOSS_MEAN): weighted_mean(unreduced, weights),
                self._summary_key(keys.ACCURACY): tf.compat.v1.metrics.accuracy(labels, predictions[keys.CLASS_IDS],
                                                                                 w)}

    def _export_outputs(self, predictions: dict) -> dict:
        classification = ClassificationOutput(scores=predictions[keys.PROBABILITIES],
                                              classes=predictions[keys.ALL_CLASSES])
        return {keys.SERVING_DEFAULT: classification, keys.CLASSIFY: classification,
                keys.PREDICT: PredictOutput(predictions)}
