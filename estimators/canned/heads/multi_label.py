"""MultiLabelHead: n_classes independent yes/no labels per example, sigmoid cross-entropy averaged over the classes,
AUCs, per-threshold and per-class metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import base, checks, keys
from estimators.canned.heads import metrics as head_metrics
from estimators.canned.metric_keys import MetricKeys as MK
from estimators.canned.prediction_keys import PredictionKeys as PK
from estimators.export.outputs import PredictOutput

_PREDICTION_KEYS = (PK.LOGITS, PK.PROBABILITIES, PK.CLASSES)


def _class_ids_for_metrics(classes: Any, n_classes: int, label_vocabulary: Sequence[str] | None) -> tuple:
    """classes_for_class_based_metrics as class ids: names through the vocabulary, ids checked to be in range."""
    if not classes:
        return ()
    classes = tuple(classes)
    if isinstance(classes[0], str):
        if not label_vocabulary:
            raise ValueError("label_vocabulary must be provided when classes_for_class_based_metrics are strings.")
        return tuple(label_vocabulary.index(name) for name in classes)
    for class_id in classes:
        if class_id < 0 or class_id >= n_classes:
            raise ValueError(f"All classes_for_class_based_metrics must be in range [0, {n_classes - 1}]. Given: "
                             f"{class_id}")
    return classes


class MultiLabelHead(base.SingleHead):
    """Labels are a multi-hot [D0, ... DN, n_classes] tensor, or class ids / vocabulary strings as a SparseTensor
    (2.15: tf.estimator.MultiLabelHead)."""

    def __init__(self, n_classes: int, weight_column: Any = None, thresholds: Sequence[float] | None = None,
                 label_vocabulary: Sequence[str] | None = None, loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE,
                 loss_fn: Callable | None = None, classes_for_class_based_metrics: Sequence[Any] | None = None,
                 name: str | None = None):
        if n_classes is None or n_classes < 2:
            raise ValueError(f"n_classes must be > 1 for multi-label classification. Given: {n_classes}")
        self._thresholds = checks.check_thresholds(thresholds,
                                                   "thresholds must be in (0, 1) range. Given: {threshold}")
        if label_vocabulary is not None:
            checks.check_label_vocabulary(label_vocabulary, "label_vocabulary must be a list or tuple. Given type: {}")
            if len(label_vocabulary) != n_classes:
                raise ValueError(f"Length of label_vocabulary must be n_classes ({n_classes}). Given: "
                                 f"{len(label_vocabulary)}")
        if loss_fn:
            checks.validate_loss_fn_args(loss_fn)
        base.validate_loss_reduction(loss_reduction)
        self._class_ids = _class_ids_for_metrics(classes_for_class_based_metrics, n_classes, label_vocabulary)
        self._n_classes = n_classes
        self._weight_column = weight_column
        self._label_vocabulary = label_vocabulary
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name
        self._threshold_keys = self._threshold_metric_keys(self._thresholds)
        if label_vocabulary is None:
            templates = (MK.PROBABILITY_MEAN_AT_CLASS, MK.AUC_AT_CLASS, MK.AUC_PR_AT_CLASS)
            names = self._class_ids
        else:
            templates = (MK.PROBABILITY_MEAN_AT_NAME, MK.AUC_AT_NAME, MK.AUC_PR_AT_NAME)
            names = [label_vocabulary[i] for i in self._class_ids]
        self._class_keys = [tuple(self._summary_key(t % name) for t in templates) for name in names]

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        """int64 multi-hot labels shaped like the logits, from a dense indicator tensor or a SparseTensor of class
        ids or vocabulary strings."""
        if labels is None:
            raise ValueError(checks.LABEL_NONE_ERR_MSG)
        if isinstance(labels, tf.SparseTensor):
            if labels.dtype == tf.string:
                table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
                    list(self._label_vocabulary or ()), tf.range(len(self._label_vocabulary or ()), dtype=tf.int64)),
                    default_value=-1, name="class_id_lookup")
                ids = tf.SparseTensor(labels.indices, table.lookup(labels.values), labels.dense_shape)
                processed = tf.sparse.to_indicator(ids, self._n_classes)
            else:
                if not labels.values.dtype.is_integer:
                    raise ValueError(f"Labels dtype should be integer. Instead got {labels.values.dtype}.")
                checked = checks.check_label_range(
                    labels.values, self._n_classes,
                    message=f"labels must be an integer SparseTensor with values in [0, {self._n_classes})")
                if tf.executing_eagerly():
                    processed = tf.sparse.to_indicator(labels, self._n_classes)
                else:
                    with tf.control_dependencies([checked]):
                        processed = tf.sparse.to_indicator(labels, self._n_classes)
            processed = tf.cast(processed, tf.int64)
        else:
            processed = checks.check_label_range(
                tf.convert_to_tensor(labels), 2,
                message="labels must be an integer indicator Tensor with values in [0, 1]")
        return checks.check_dense_labels_match_logits_and_reshape(processed, logits, self.logits_dimension)

    def _unweighted_loss_and_weights(self, logits: tf.Tensor, labels: tf.Tensor, features: dict) -> tuple:
        if self._loss_fn:
            unweighted = checks.call_loss_fn(self._loss_fn, labels, logits, features, expected_loss_dim=1)
        else:
            unweighted = tf.compat.v1.losses.sigmoid_cross_entropy(
                multi_class_labels=labels, logits=logits, reduction=tf.compat.v1.losses.Reduction.NONE)
            unweighted = tf.reduce_mean(unweighted, axis=-1, keepdims=True)
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
                result[PK.PROBABILITIES] = tf.sigmoid(logits, name=PK.PROBABILITIES)
            if PK.CLASSES in wanted:  # every class's name, as 2.15's multi-label predictions held them
                result[PK.CLASSES] = base.all_classes(logits, self._n_classes, self._label_vocabulary)
        return result

    def metrics(self, regularization_losses: Any = None) -> dict:
        """2.15's metric objects: the mean loss, ROC and PR AUC, accuracy/precision/recall at each threshold and
        the mean probability and AUCs of each class of classes_for_class_based_metrics."""
        m = head_metrics.keras_metrics()
        with tf.name_scope("metrics"):
            result = {self._summary_key(MK.LOSS_MEAN): m.Mean(name=MK.LOSS_MEAN),
                      self._summary_key(MK.AUC): m.AUC(name=MK.AUC),
                      self._summary_key(MK.AUC_PR): m.AUC(curve="PR", name=MK.AUC_PR)}
            if regularization_losses is not None:
                result[self._summary_key(MK.LOSS_REGULARIZATION)] = m.Mean(name=MK.LOSS_REGULARIZATION)
            for threshold, (accuracy, precision, recall) in zip(self._thresholds, self._threshold_keys, strict=True):
                result[accuracy] = m.BinaryAccuracy(name=accuracy, threshold=threshold)
                result[precision] = m.Precision(name=precision, thresholds=threshold)
                result[recall] = m.Recall(name=recall, thresholds=threshold)
            for probability, auc, auc_pr in self._class_keys:
                result[probability] = m.Mean(name=probability)
                result[auc] = m.AUC(name=auc)
                result[auc_pr] = m.AUC(curve="PR", name=auc_pr)
        return result

    def update_metrics(self, eval_metrics: dict, features: dict, logits: Any, labels: Any,
                       regularization_losses: Any = None) -> dict:
        """Updates metrics() objects with this batch; returns them."""
        logits = checks.check_logits_final_dim(logits, self.logits_dimension)
        processed = self._processed_labels(logits, labels)
        unweighted, weights = self._unweighted_loss_and_weights(logits, processed, features or {})
        probabilities = self.predictions(logits, [PK.PROBABILITIES])[PK.PROBABILITIES]
        eval_metrics[self._summary_key(MK.LOSS_MEAN)].update_state(values=unweighted, sample_weight=weights)
        for name in (MK.AUC, MK.AUC_PR):
            eval_metrics[self._summary_key(name)].update_state(y_true=processed, y_pred=probabilities,
                                                               sample_weight=weights)
        head_metrics.add_regularization(eval_metrics, self._summary_key(MK.LOSS_REGULARIZATION),
                                        regularization_losses)
        for threshold_keys in self._threshold_keys:
            for name in threshold_keys:
                eval_metrics[name].update_state(y_true=processed, y_pred=probabilities, sample_weight=weights)
        for class_id, (probability, auc, auc_pr) in zip(self._class_ids, self._class_keys, strict=True):
            batch_rank = tf.rank(probabilities) - 1
            begin = tf.concat([tf.zeros([batch_rank], tf.int32), [class_id]], axis=0)
            size = tf.concat([-1 * tf.ones([batch_rank], tf.int32), [1]], axis=0)
            class_probabilities = tf.slice(probabilities, begin=begin, size=size)
            class_labels = tf.slice(processed, begin=begin, size=size)
            head_metrics.update_with_broadcast_weights(eval_metrics[probability], class_probabilities, weights)
            for name in (auc, auc_pr):
                eval_metrics[name].update_state(y_true=class_labels, y_pred=class_probabilities,
                                                sample_weight=weights)
        return eval_metrics

    def _export_outputs(self, predictions: dict) -> dict:
        classification = base.classification_output(predictions[PK.PROBABILITIES], self._n_classes,
                                                    self._label_vocabulary)
        return {keys.SERVING_DEFAULT: classification, keys.CLASSIFY: classification,
                keys.PREDICT: PredictOutput(predictions)}
