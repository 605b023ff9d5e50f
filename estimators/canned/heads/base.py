"""What every head shares, as tf.estimator 2.15's V2 heads (head/base_head.py) had it: the reduced training loss,
Keras-2 metric objects updated by update_metrics, the train op, the loss summaries and the EstimatorSpec for each
mode. It works eagerly and in a TF1 graph; the shape checks live in checks.py, the metrics in metrics.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import keys
from estimators.canned.heads.checks import LABEL_NONE_ERR_MSG as _LABEL_NONE_ERR_MSG  # noqa: F401 - 2.15's name
from estimators.canned.heads.checks import (  # noqa: F401 - 2.15's base_head names, for programs reaching them
    call_loss_fn,
    check_dense_labels_match_logits_and_reshape,
    check_label_range,
    check_logits_final_dim,
    check_prediction_keys,
    get_weights_and_check_match_logits,
    validate_loss_fn_args,
)
from estimators.canned.heads.classes import ids_to_names
from estimators.canned.heads.metrics import (  # noqa: F401 - 2.15's base_head name
    update_with_broadcast_weights as update_metric_with_broadcast_weights,
)
from estimators.canned.metric_keys import MetricKeys as MK
from estimators.canned.prediction_keys import PredictionKeys as PK
from estimators.export.outputs import ClassificationOutput
from estimators.mode_keys import ModeKeys
from estimators.specs import EstimatorSpec

DEFAULT_SERVING_KEY = keys.SERVING_DEFAULT
CLASSIFY_SERVING_KEY = keys.CLASSIFY
REGRESS_SERVING_KEY = keys.REGRESS
PREDICT_SERVING_KEY = keys.PREDICT
_VALIDATION_ERROR_MSG = "{} should be a list or a tuple. Given type: {}."


def validate_loss_reduction(loss_reduction: Any) -> None:
    keys.loss_reduction(loss_reduction)


def validate_update_ops(update_ops: Any = None) -> None:
    if update_ops is not None and not isinstance(update_ops, (list, tuple)):
        raise ValueError(_VALIDATION_ERROR_MSG.format("update_ops", type(update_ops)))


def validate_trainable_variables(trainable_variables: Any = None) -> None:
    if trainable_variables is None:
        raise ValueError(f"trainable_variables cannot be None. Given {trainable_variables}")
    if not isinstance(trainable_variables, (list, tuple)):
        raise ValueError(_VALIDATION_ERROR_MSG.format("trainable_variables", type(trainable_variables)))


def _is_legacy_keras_optimizer(optimizer: Any) -> bool:
    try:
        import tf_keras
    except ImportError:  # pragma: no cover - depends on the install
        return False
    return isinstance(optimizer, tf_keras.optimizers.legacy.Optimizer)


def validate_v2_optimizer(optimizer: Any) -> None:
    """A Keras 2 optimizer (tf_keras's, legacy or not; Keras 3's cannot update a TF1 graph's variables); a
    tf.compat.v1 optimizer is taken too (V1 canned estimators)."""
    if isinstance(optimizer, tf.compat.v1.train.Optimizer) or _is_legacy_keras_optimizer(optimizer):
        return
    modules = [c.__module__ for c in type(optimizer).__mro__ if c.__name__ == "Optimizer"]
    if any(m.startswith("keras.") for m in modules) and not any(m.startswith("tf_keras.") for m in modules):
        raise ValueError(f"The given optimizer is a Keras 3 optimizer ({type(optimizer).__name__}), which cannot "
                         f"update this TF1 graph's variables: pass a Keras 2 one, e.g. "
                         f"tf_keras.optimizers.legacy.{type(optimizer).__name__}, as tf.estimator 2.15 took.")
    if not any(m.startswith("tf_keras.") for m in modules):
        raise ValueError(f"The given optimizer is not a tf.keras.optimizers.Optimizer instance. Received optimizer "
                         f"of type {type(optimizer)}")


def validate_n_classes(n_classes: Any) -> Any:
    """n_classes > 2 (a Python int is checked now, a tensor by an assertion)."""
    if isinstance(n_classes, int) and n_classes <= 2:
        raise ValueError(f"n_classes must be > 2: {n_classes}.")
    if not isinstance(n_classes, int):
        tf.compat.v1.debugging.assert_greater(tf.convert_to_tensor(n_classes), 2,
                                              message="n_classes must be greater than 2")
    return n_classes


def weighted_training_loss(unweighted_loss: tf.Tensor, weights: Any, reduction: str) -> tf.Tensor:
    """The weighted per-example losses reduced as Keras 2 reduced them (the sum, or the sum over their count)."""
    import tf_keras

    return tf_keras.__internal__.losses.compute_weighted_loss(unweighted_loss, sample_weight=weights,
                                                             reduction=keys.loss_reduction(reduction))


def regularized(training_loss: tf.Tensor, regularization_losses: Any) -> tf.Tensor:
    if regularization_losses is None:
        return training_loss
    return training_loss + tf.math.add_n(regularization_losses)


def create_estimator_spec_train_op(head_name: str | None, optimizer: Any = None, trainable_variables: Any = None,
                                   train_op_fn: Callable | None = None, update_ops: Any = None,
                                   regularized_training_loss: Any = None,
                                   loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE) -> Any:
    """2.15's training step under the root 'training' scope: a Keras optimizer's get_updates on
    `trainable_variables` (a legacy OptimizerV2's iterations are the global step, so no second counter is
    saved), a tf.compat.v1 optimizer's minimize, or train_op_fn(loss); `update_ops` are grouped in."""
    del head_name
    validate_update_ops(update_ops)
    loss = regularized_training_loss
    with tf.compat.v1.name_scope(""), tf.compat.v1.name_scope("training"):
        if optimizer is not None:
            if train_op_fn is not None:
                raise ValueError("train_op_fn and optimizer cannot both be set.")
            validate_v2_optimizer(optimizer)
            validate_trainable_variables(trainable_variables)
            if keys.loss_reduction(loss_reduction) == keys.SUM_OVER_BATCH_SIZE:
                replicas = tf.distribute.get_strategy().num_replicas_in_sync
                if replicas > 1:
                    loss *= 1.0 / replicas
            global_step = tf.compat.v1.train.get_or_create_global_step()
            if isinstance(optimizer, tf.compat.v1.train.Optimizer):
                train_op = optimizer.minimize(loss, global_step=global_step, var_list=list(trainable_variables))
            else:
                if _is_legacy_keras_optimizer(optimizer):
                    optimizer.iterations = global_step
                train_op = optimizer.get_updates(loss, list(trainable_variables))[0]
        elif train_op_fn is not None:
            train_op = train_op_fn(loss)
        else:
            raise ValueError("train_op_fn and optimizer cannot both be None.")
        if update_ops is not None:
            train_op = tf.group(train_op, *update_ops)
    return train_op


def create_estimator_spec_summary(regularized_training_loss: tf.Tensor, regularization_losses: Any = None,
                                  summary_key_fn: Callable | None = None) -> None:
    """The training loss summary (and the regularization loss's), at the graph's root scope."""
    key_of = summary_key_fn or (lambda key: key)
    with tf.compat.v1.name_scope(""):
        tf.compat.v1.summary.scalar(key_of(MK.LOSS), regularized_training_loss)
        if regularization_losses is not None:
            tf.compat.v1.summary.scalar(key_of(MK.LOSS_REGULARIZATION), tf.math.add_n(regularization_losses))


def all_class_ids(logits: tf.Tensor, n_classes: int) -> tf.Tensor:
    """[batch, n_classes]: every class id, once per example."""
    return tf.tile(tf.expand_dims(tf.range(n_classes), 0), [tf.shape(logits)[0], 1])


def all_classes(logits: tf.Tensor, n_classes: int, label_vocabulary: Any = None) -> tf.Tensor:
    """[batch, n_classes]: every class name (the vocabulary, or the ids as strings), once per example."""
    if label_vocabulary:
        names = tf.convert_to_tensor([label_vocabulary])
    else:
        names = tf.strings.as_string(tf.expand_dims(tf.range(n_classes), 0))
    return tf.tile(names, [tf.shape(logits)[0], 1])


def classification_output(scores: tf.Tensor, n_classes: int, label_vocabulary: Any = None) -> ClassificationOutput:
    return ClassificationOutput(scores=scores, classes=all_classes(scores, n_classes, label_vocabulary))


def wanted_keys(wanted: Any, valid: Any) -> Any:
    """The prediction keys asked for (all by default), each checked to be one the head makes."""
    if not wanted:
        return valid
    check_prediction_keys(wanted, list(valid))
    return wanted


class Head:
    """A head turns logits into the loss, predictions, metrics and export signatures for a mode (2.15's
    tf.estimator.Head). Subclasses give name, logits_dimension, loss_reduction, loss, predictions, metrics,
    update_metrics and _export_outputs; create_estimator_spec puts them together."""

    _name: str | None = None

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def logits_dimension(self) -> int:
        raise NotImplementedError("Calling an abstract method.")

    @property
    def loss_reduction(self) -> Any:
        raise NotImplementedError("Calling an abstract method.")

    def loss(self, labels: Any, logits: Any, features: dict | None = None, mode: str | None = None,
             regularization_losses: Any = None) -> tf.Tensor:
        raise NotImplementedError("Calling an abstract method.")

    def predictions(self, logits: Any, keys: list[str] | None = None) -> dict:
        raise NotImplementedError("Calling an abstract method.")

    def metrics(self, regularization_losses: Any = None) -> dict:
        raise NotImplementedError("Calling an abstract method.")

    def update_metrics(self, eval_metrics: dict, features: dict, logits: Any, labels: Any,
                       regularization_losses: Any = None) -> dict:
        raise NotImplementedError("Calling an abstract method.")

    def _export_outputs(self, predictions: dict) -> dict:
        raise NotImplementedError("Subclasses of Head must implement `create_estimator_spec()`.")

    def _summary_key(self, key: str) -> str:
        return f"{key}/{self.name}" if self.name else key

    def create_estimator_spec(self, features: dict, mode: str, logits: Any, labels: Any = None,
                              optimizer: Any = None, trainable_variables: Any = None,
                              train_op_fn: Callable | None = None, update_ops: Any = None,
                              regularization_losses: Any = None) -> EstimatorSpec:
        """The EstimatorSpec for `mode`: predictions and export signatures in PREDICT; the loss and the updated
        metric objects in EVAL; the loss and the train op in TRAIN (eval_metric_ops {} but in EVAL, as 2.15's)."""
        with tf.compat.v1.name_scope(self.name, "head"):
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(ModeKeys.PREDICT, predictions=predictions, eval_metric_ops={},
                                     export_outputs=self._export_outputs(predictions))
            loss = self.loss(labels=labels, logits=logits, features=features, mode=mode,
                             regularization_losses=regularization_losses)
            if mode == ModeKeys.EVAL:
                eval_metrics = self.metrics(regularization_losses=regularization_losses)
                eval_metrics = self.update_metrics(eval_metrics, features, logits, labels,
                                                   regularization_losses=regularization_losses)
                return EstimatorSpec(ModeKeys.EVAL, predictions=predictions, loss=loss, eval_metric_ops=eval_metrics)
            train_op = create_estimator_spec_train_op(self.name, optimizer, trainable_variables, train_op_fn,
                                                      update_ops, loss, self.loss_reduction)
        create_estimator_spec_summary(loss, regularization_losses, self._summary_key)
        return EstimatorSpec(ModeKeys.TRAIN, predictions=predictions, loss=loss, train_op=train_op,
                             eval_metric_ops={})


class SingleHead(Head):
    """A head over one label (every head but MultiHead): its loss is the subclass's per-example loss
    (_unweighted_loss_and_weights on _processed_labels) weighted, reduced by loss_reduction, plus regularization."""

    _loss_reduction: Any = keys.SUM_OVER_BATCH_SIZE

    @property
    def loss_reduction(self) -> Any:
        return self._loss_reduction

    def _processed_labels(self, logits: tf.Tensor, labels: Any) -> tf.Tensor:
        raise NotImplementedError("Calling an abstract method.")

    def _unweighted_loss_and_weights(self, logits: tf.Tensor, labels: tf.Tensor, features: dict) -> tuple:
        raise NotImplementedError("Calling an abstract method.")

    def loss(self, labels: Any, logits: Any, features: dict | None = None, mode: str | None = None,
             regularization_losses: Any = None) -> tf.Tensor:
        """The weighted per-example loss reduced by loss_reduction, plus the regularization losses."""
        del mode
        with tf.name_scope("losses"):
            logits = check_logits_final_dim(logits, self.logits_dimension)
            processed = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, processed, features or {})
            training_loss = weighted_training_loss(unweighted, weights, self._loss_reduction)
            return regularized(training_loss, regularization_losses)

    def _threshold_metric_keys(self, thresholds: Sequence[float]) -> list[tuple[str, str, str]]:
        """(accuracy, precision, recall) metric keys at each threshold, under the head's name."""
        templates = (MK.ACCURACY_AT_THRESHOLD, MK.PRECISION_AT_THRESHOLD, MK.RECALL_AT_THRESHOLD)
        return [tuple(self._summary_key(template % t) for template in templates) for t in thresholds]


def add_class_predictions(result: dict, wanted: Any, class_logits: tf.Tensor, label_vocabulary: Any) -> None:
    """The arg-max class ids ([batch, 1]) and their names, for the prediction keys asked for."""
    if PK.CLASS_IDS in wanted or PK.CLASSES in wanted:
        class_ids = tf.expand_dims(tf.argmax(class_logits, axis=-1, name=PK.CLASS_IDS), -1)
        if PK.CLASS_IDS in wanted:
            result[PK.CLASS_IDS] = class_ids
        if PK.CLASSES in wanted:
            result[PK.CLASSES] = ids_to_names(class_ids, label_vocabulary)
