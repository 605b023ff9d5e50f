"""BinaryClassHead: one logit per example, sigmoid cross-entropy, 2.15's binary metrics and signatures."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import base, checks, keys
from estimators.canned.heads import keys as _k  # predictions() takes an argument named keys, as 2.15's
from estimators.canned.heads import metrics as head_metrics
from estimators.canned.heads.classes import check_vocabulary, ids_to_names, lookup_class_ids
from estimators.export.outputs import PredictOutput, RegressionOutput

_PREDICTION_KEYS = (keys.LOGITS, keys.LOGISTIC, keys.PROBABILITIES, keys.CLASS_IDS, keys.CLASSES,
                    keys.ALL_CLASS_IDS, keys.ALL_CLASSES)


class BinaryClassHead(base.Head):
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
        self._threshold_keys = [
            tuple(self._summary_key(template % t) for template in (keys.ACCURACY_AT_THRESHOLD,
                                                                    keys.PRECISION_AT_THRESHOLD,
                                                                    keys.RECALL_AT_THRESHOLD))
            for t in self._thresholds]

    @property
    def logits_dimension(self) -> int:
        return 1

    @property
    def loss_reduction(self) -> Any:
        return self._loss_reduction

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

    def loss(self, labels: Any, logits: Any, features: dict | None = None, mode: str | None = None,
             regularization_losses: Any = None) -> tf.Tensor:
        """The weighted sigmoid cross-entropy reduced by loss_reduction, plus the regularization losses."""
        del mode
        with tf.name_scope("losses"):
            logits = checks.check_logits_final_dim(logits, 1)
            labels = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features or {})
            training_loss = base.weighted_training_loss(unweighted, weights, self._loss_reduction)
            return base.regularized(training_loss, regularization_losses)

    def predictions(self, logits: Any, keys: Sequence[str] | None = None) -> dict:  # noqa: A002 - 2.15's name
        wanted = base.wanted_keys(keys, _PREDICTION_KEYS)
        logits = checks.check_logits_final_dim(logits, 1)
        result = {}
        with tf.name_scope("predictions"):
            if _k.LOGITS in wanted:
                result[_k.LOGITS] = logits
            if _k.LOGISTIC in wanted:
                result[_k.LOGISTIC] = tf.sigmoid(logits, name=_k.LOGISTIC)
            two_class_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1, name="two_class_logits")
            if _k.PROBABILITIES in wanted:
                result[_k.PROBABILITIES] = tf.nn.softmax(two_class_logits, name=_k.PROBABILITIES)
            if _k.CLASS_IDS in wanted or _k.CLASSES in wanted:
                class_ids = tf.expand_dims(tf.argmax(two_class_logits, axis=-1, name=_k.CLASS_IDS), -1)
                if _k.CLASS_IDS in wanted:
                    result[_k.CLASS_IDS] = class_ids
                if _k.CLASSES in wanted:
                    result[_k.CLASSES] = ids_to_names(class_ids, self._label_vocabulary)
            if _k.ALL_CLASS_IDS in wanted:
                result[_k.ALL_CLASS_IDS] = base.all_class_ids(logits, 2)
            if _k.ALL_CLASSES in wanted:
                result[_k.ALL_CLASSES] = base.all_classes(logits, 2, self._label_vocabulary)
        return result

    def metrics(self, regularization_losses: Any = None) -> dict:
        """2.15's metric objects: means of the loss, predictions and labels, accuracy, precision, recall, the
        accuracy baseline, ROC and PR AUC, and accuracy/precision/recall at each threshold."""
        m = head_metrics.keras_metrics()
        with tf.name_scope("metrics"):
            result = {self._summary_key(keys.LOSS_MEAN): m.Mean(name=keys.LOSS_MEAN),
                      self._summary_key(keys.ACCURACY): m.Accuracy(name=keys.ACCURACY),
                      self._summary_key(keys.PRECISION): m.Precision(name=keys.PRECISION),
                      self._summary_key(keys.RECALL): m.Recall(name=keys.RECALL),
                      self._summary_key(keys.PREDICTION_MEAN): m.Mean(name=keys.PREDICTION_MEAN),
                      self._summary_key(keys.LABEL_MEAN): m.Mean(name=keys.LABEL_MEAN),
                      self._summary_key(keys.ACCURACY_BASELINE): head_metrics.accuracy_baseline(
                          keys.ACCURACY_BASELINE),
                      self._summary_key(keys.AUC): m.AUC(name=keys.AUC),
                      self._summary_key(keys.AUC_PR): m.AUC(curve="PR", name=keys.AUC_PR)}
            if regularization_losses is not None:
                result[self._summary_key(keys.LOSS_REGULARIZATION)] = m.Mean(name=keys.LOSS_REGULARIZATION)
            for threshold, (accuracy, precision, recall) in zip(self._thresholds, self._threshold_keys, strict=True):
                result[accuracy] = m.BinaryAccuracy(name=accuracy, threshold=threshold)
                result[precision] = m.Precision(name=precision, thresholds=threshold)
                result[recall] = m.Recall(name=recall, thresholds=threshold)
        return result

    def update_metrics(self, eval_metrics: dict, features: dict, logits: Any, labels: Any,
                       regularization_losses: Any = None) -> dict:
        """Updates metrics() objects with this batch; returns them."""
        predictions = self.predictions(logits)
        class_ids, logistic = predictions[_k.CLASS_IDS], predictions[_k.LOGISTIC]
        logits = checks.check_logits_final_dim(logits, 1)
        labels = self._processed_labels(logits, labels)
        unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features or {})
        key = self._summary_key
        eval_metrics[key(keys.LOSS_MEAN)].update_state(values=unweighted, sample_weight=weights)
        for name in (keys.ACCURACY, keys.PRECISION, keys.RECALL):
            eval_metrics[key(name)].update_state(y_true=labels, y_pred=class_ids, sample_weight=weights)
        head_metrics.update_with_broadcast_weights(eval_metrics[key(keys.PREDICTION_MEAN)], logistic, weights)
        head_metrics.update_with_broadcast_weights(eval_metrics[key(keys.LABEL_MEAN)], labels, weights)
        head_metrics.update_with_broadcast_weights(eval_metrics[key(keys.ACCURACY_BASELINE)], labels, weights)
        head_metrics.update_auc(eval_metrics[key(keys.AUC)], labels, logistic, weights)
        head_metrics.update_auc(eval_metrics[key(keys.AUC_PR)], labels, logistic, weights)
        head_metrics.add_regularization(eval_metrics, key(keys.LOSS_REGULARIZATION), regularization_losses)
        for threshold_keys in self._threshold_keys:
            for name in threshold_keys:
                eval_metrics[name].update_state(y_true=labels, y_pred=logistic, sample_weight=weights)
        return eval_metrics

    def _export_outputs(self, predictions: dict) -> dict:
        classification = base.classification_output(predictions[_k.PROBABILITIES], 2, self._label_vocabulary)
        return {keys.SERVING_DEFAULT: classification, keys.CLASSIFY: classification,
                keys.REGRESS: RegressionOutput(value=predictions[_k.LOGISTIC]),
                keys.PREDICT: PredictOutput(predictions)}
