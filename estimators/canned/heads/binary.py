"""BinaryClassHead: one logit per example, sigmoid cross-entropy, 2.15's binary metrics and signatures."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import base, checks, keys
from estimators.canned.heads import metrics as head_metrics
from estimators.canned.heads.classes import check_vocabulary, lookup_class_ids
from estimators.canned.metric_keys import MetricKeys as MK
from estimators.canned.prediction_keys import PredictionKeys as PK
from estimators.export.outputs import PredictOutput, RegressionOutput

_PREDICTION_KEYS = (PK.LOGITS, PK.LOGISTIC, PK.PROBABILITIES, PK.CLASS_IDS, PK.CLASSES,
                    PK.ALL_CLASS_IDS, PK.ALL_CLASSES)


class BinaryClassHead(base.SingleHead):
    """Two classes from one logit (2.15: tf.estimator.BinaryClassHead); `thresholds` add accuracy, precision and
    recall at each, `loss_fn(labels, logits[, features])` replaces sigmoid cross-entropy."""

    def __init__(self, weight_column: Any = None, thresholds: Sequence[float] | None = None,
                 label_vocabulary: Sequence[str] | None = None, loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE,
                 loss_fn: Callable | None = None, name: str | None = None):
        checks.check_label_vocabulary(label_vocabulary)
        check_vocabulary(label_vocabulary, 2)  # 2.15 took any length here and failed on the third class's labels
        self._thresholds = checks.check_thresholds(thresholds, "thresholds not in (0, 1): {thresholds}.")
        base.validate_loss_reduction(loss_reduction)
        if loss_fn:
            checks.validate_loss_fn_args(loss_fn)
        self._weight_column = weight_column
        self._label_vocabulary = label_vocabulary
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name
        self._threshold_keys = self._threshold_metric_keys(self._thresholds)

    @property
    def logits_dimension(self) -> int:
        return 1

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        """float32 labels in [0, 1] (vocabulary strings as 0/1), shaped like the logits."""
        labels = checks.check_dense_labels_match_logits_and_reshape(labels, logits, 1)
        if self._label_vocabulary is not None:
            labels = lookup_class_ids(labels, self._label_vocabulary)
        return checks.check_label_range(tf.cast(labels, tf.float32), n_classes=2)

    def _unweighted_loss_and_weights(self, logits: tf.Tensor, labels: tf.Tensor, features: dict) -> tuple:
        if self._loss_fn:
            unweighted = checks.call_loss_fn(self._loss_fn, labels, logits, features, expected_loss_dim=1)
        else:
            if not logits.shape.is_compatible_with(labels.shape):  # 2.15's TensorFlow said it so
                raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
            unweighted = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        weights = checks.get_weights_and_check_match_logits(features, self._weight_column, logits)
        return unweighted, weights

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict:  # noqa: A002 - 2.15's name
        wanted = base.wanted_keys(keys, _PREDICTION_KEYS)
        logits = checks.check_logits_final_dim(logits, 1)
        result = {}
        with tf.name_scope("predictions"):
            if PK.LOGITS in wanted:
                result[PK.LOGITS] = logits
            if PK.LOGISTIC in wanted:
                result[PK.LOGISTIC] = tf.sigmoid(logits, name=PK.LOGISTIC)
            two_class_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1, name="two_class_logits")
            if PK.PROBABILITIES in wanted:
                result[PK.PROBABILITIES] = tf.nn.softmax(two_class_logits, name=PK.PROBABILITIES)
            base.add_class_predictions(result, wanted, two_class_logits, self._label_vocabulary)
            if PK.ALL_CLASS_IDS in wanted:
                result[PK.ALL_CLASS_IDS] = base.all_class_ids(logits, 2)
            if PK.ALL_CLASSES in wanted:
                result[PK.ALL_CLASSES] = base.all_classes(logits, 2, self._label_vocabulary)
        return result

    def metrics(self, regularization_losses: Any = None) -> dict:
        """2.15's metric objects: means of the loss, predictions and labels, accuracy, precision, recall, the
        accuracy baseline, ROC and PR AUC, and accuracy/precision/recall at each threshold."""
        m = head_metrics.keras_metrics()
        with tf.name_scope("metrics"):
            result = {self._summary_key(MK.LOSS_MEAN): m.Mean(name=MK.LOSS_MEAN),
                      self._summary_key(MK.ACCURACY): m.Accuracy(name=MK.ACCURACY),
                      self._summary_key(MK.PRECISION): m.Precision(name=MK.PRECISION),
                      self._summary_key(MK.RECALL): m.Recall(name=MK.RECALL),
                      self._summary_key(MK.PREDICTION_MEAN): m.Mean(name=MK.PREDICTION_MEAN),
                      self._summary_key(MK.LABEL_MEAN): m.Mean(name=MK.LABEL_MEAN),
                      self._summary_key(MK.ACCURACY_BASELINE): head_metrics.accuracy_baseline(
                          MK.ACCURACY_BASELINE),
                      self._summary_key(MK.AUC): m.AUC(name=MK.AUC),
                      self._summary_key(MK.AUC_PR): m.AUC(curve="PR", name=MK.AUC_PR)}
            if regularization_losses is not None:
                result[self._summary_key(MK.LOSS_REGULARIZATION)] = m.Mean(name=MK.LOSS_REGULARIZATION)
            for threshold, (accuracy, precision, recall) in zip(self._thresholds, self._threshold_keys, strict=True):
                result[accuracy] = m.BinaryAccuracy(name=accuracy, threshold=threshold)
                result[precision] = m.Precision(name=precision, thresholds=threshold)
                result[recall] = m.Recall(name=recall, thresholds=threshold)
        return result

    def update_metrics(self, eval_metrics: dict, features: dict, logits: Any, labels: Any,
                       regularization_losses: Any = None) -> dict:
        """Updates metrics() objects with this batch; returns them."""
        predictions = self.predictions(logits)
        class_ids, logistic = predictions[PK.CLASS_IDS], predictions[PK.LOGISTIC]
        logits = checks.check_logits_final_dim(logits, 1)
        labels = self._processed_labels(logits, labels)
        unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features or {})
        key = self._summary_key
        eval_metrics[key(MK.LOSS_MEAN)].update_state(values=unweighted, sample_weight=weights)
        for name in (MK.ACCURACY, MK.PRECISION, MK.RECALL):
            eval_metrics[key(name)].update_state(y_true=labels, y_pred=class_ids, sample_weight=weights)
        head_metrics.update_with_broadcast_weights(eval_metrics[key(MK.PREDICTION_MEAN)], logistic, weights)
        head_metrics.update_with_broadcast_weights(eval_metrics[key(MK.LABEL_MEAN)], labels, weights)
        head_metrics.update_with_broadcast_weights(eval_metrics[key(MK.ACCURACY_BASELINE)], labels, weights)
        head_metrics.update_auc(eval_metrics[key(MK.AUC)], labels, logistic, weights)
        head_metrics.update_auc(eval_metrics[key(MK.AUC_PR)], labels, logistic, weights)
        head_metrics.add_regularization(eval_metrics, key(MK.LOSS_REGULARIZATION), regularization_losses)
        for threshold_keys in self._threshold_keys:
            for name in threshold_keys:
                eval_metrics[name].update_state(y_true=labels, y_pred=logistic, sample_weight=weights)
        return eval_metrics

    def _export_outputs(self, predictions: dict) -> dict:
        classification = base.classification_output(predictions[PK.PROBABILITIES], 2, self._label_vocabulary)
        return {keys.SERVING_DEFAULT: classification, keys.CLASSIFY: classification,
                keys.REGRESS: RegressionOutput(value=predictions[PK.LOGISTIC]),
                keys.PREDICT: PredictOutput(predictions)}
