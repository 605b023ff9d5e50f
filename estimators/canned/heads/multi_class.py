"""MultiClassHead: n_classes logits, softmax cross-entropy on class ids, accuracy and the classification signature."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import base, checks, keys
from estimators.canned.heads import metrics as head_metrics
from estimators.canned.heads.classes import check_vocabulary, lookup_class_ids
from estimators.canned.metric_keys import MetricKeys as MK
from estimators.canned.prediction_keys import PredictionKeys as PK
from estimators.export.outputs import PredictOutput

_PREDICTION_KEYS = (PK.LOGITS, PK.PROBABILITIES, PK.CLASS_IDS, PK.CLASSES, PK.ALL_CLASS_IDS,
                    PK.ALL_CLASSES)


class MultiClassHead(base.SingleHead):
    """One of n_classes (> 2) classes per example (2.15: tf.estimator.MultiClassHead); labels are integer class
    ids, or strings of label_vocabulary."""

    def __init__(self, n_classes: int, weight_column: Any = None, label_vocabulary: Sequence[str] | None = None,
                 loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE, loss_fn: Callable | None = None,
                 name: str | None = None):
        if n_classes is None:
            raise ValueError("n_classes cannot be None")
        check_vocabulary(label_vocabulary, n_classes)
        base.validate_loss_reduction(loss_reduction)
        if loss_fn:
            checks.validate_loss_fn_args(loss_fn)
        self._n_classes = base.validate_n_classes(n_classes)
        self._weight_column = weight_column
        self._label_vocabulary = label_vocabulary
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name

    @property
    def logits_dimension(self) -> Any:
        return self._n_classes

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        """Class ids [D0, ... DN, 1], checked to lie in [0, n_classes)."""
        labels = checks.check_dense_labels_match_logits_and_reshape(labels, logits, 1)
        if self._label_vocabulary is None:
            if not labels.dtype.is_integer:
                raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype}.")
            label_ids = labels
        else:
            if labels.dtype != tf.string:
                raise ValueError(f"Labels dtype should be string if there is a vocabulary. Instead got "
                                 f"{labels.dtype}")
            label_ids = lookup_class_ids(labels, self._label_vocabulary)
        return checks.check_label_range(label_ids, self._n_classes)

    def _unweighted_loss_and_weights(self, logits: tf.Tensor, label_ids: tf.Tensor, features: dict) -> tuple:
        if self._loss_fn:
            unweighted = checks.call_loss_fn(self._loss_fn, label_ids, logits, features, expected_loss_dim=1)
        else:
            unweighted = tf.compat.v1.losses.sparse_softmax_cross_entropy(
                labels=label_ids, logits=logits, reduction=tf.compat.v1.losses.Reduction.NONE)
            unweighted = tf.expand_dims(unweighted, -1)
        weights = checks.get_weights_and_check_match_logits(features, self._weight_column, logits)
        return unweighted, weights

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict:  # noqa: A002 - 2.15's name
        wanted = base.wanted_keys(keys, _PREDICTION_KEYS)
        logits = checks.check_logits_final_dim(logits, self.logits_dimension)
        result = {}
        with tf.name_scope("predictions"):
            if PK.LOGITS in wanted:
                result[PK.LOGITS] = logits
            if PK.PROBABILITIES in wanted:
                result[PK.PROBABILITIES] = tf.nn.softmax(logits, name=PK.PROBABILITIES)
            base.add_class_predictions(result, wanted, logits, self._label_vocabulary)
            if PK.ALL_CLASS_IDS in wanted:
                result[PK.ALL_CLASS_IDS] = base.all_class_ids(logits, self._n_classes)
            if PK.ALL_CLASSES in wanted:
                result[PK.ALL_CLASSES] = base.all_classes(logits, self._n_classes, self._label_vocabulary)
        return result

    def metrics(self, regularization_losses: Any = None) -> dict:
        """2.15's metric objects: the mean loss and accuracy (and the regularization loss's mean)."""
        m = head_metrics.keras_metrics()
        with tf.name_scope("metrics"):
            result = {self._summary_key(MK.LOSS_MEAN): m.Mean(name=MK.LOSS_MEAN)}
            if regularization_losses is not None:
                result[self._summary_key(MK.LOSS_REGULARIZATION)] = m.Mean(name=MK.LOSS_REGULARIZATION)
            result[self._summary_key(MK.ACCURACY)] = m.Accuracy(name=MK.ACCURACY)
        return result

    def update_metrics(self, eval_metrics: dict, features: dict, logits: Any, labels: Any,
                       regularization_losses: Any = None) -> dict:
        """Updates metrics() objects with this batch; returns them."""
        class_ids = self.predictions(logits)[PK.CLASS_IDS]
        logits = checks.check_logits_final_dim(logits, self.logits_dimension)
        label_ids = self._processed_labels(logits, labels)
        unweighted, weights = self._unweighted_loss_and_weights(logits, label_ids, features or {})
        eval_metrics[self._summary_key(MK.LOSS_MEAN)].update_state(values=unweighted, sample_weight=weights)
        eval_metrics[self._summary_key(MK.ACCURACY)].update_state(y_true=label_ids, y_pred=class_ids,
                                                                    sample_weight=weights)
        head_metrics.add_regularization(eval_metrics, self._summary_key(MK.LOSS_REGULARIZATION),
                                        regularization_losses)
        return eval_metrics

    def _export_outputs(self, predictions: dict) -> dict:
        classification = base.classification_output(predictions[PK.PROBABILITIES], self._n_classes,
                                                    self._label_vocabulary)
        return {keys.SERVING_DEFAULT: classification, keys.CLASSIFY: classification,
                keys.PREDICT: PredictOutput(predictions)}
