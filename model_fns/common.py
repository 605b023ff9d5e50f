"""What every classifier model_fn shares: input extraction, loss, train op, metrics and predictions.

A model module turns raw images into logits; `classifier_spec` turns logits into the
TPUEstimatorSpec for the mode, so every model trains, evaluates and predicts the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, TPUEstimatorSpec
from estimators.training import train_metrics
from model_fns.lr_schedules import WarmupSchedule

__all__ = ["CONFUSION_MATRIX", "ConfusionMatrix", "batch_accuracy", "classifier_spec", "image_tensor",
           "learning_rate", "merged_params", "metric_fn", "predictions"]

_IMAGE_KEYS = ("image", "images")
CONFUSION_MATRIX = "confusion_matrix"  # the params key that asks evaluations for it, and its key in their result


def merged_params(defaults: Mapping[str, Any], params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The model's defaults overridden by the caller's params (which may name only some keys)."""
    return {**defaults, **(params or {})}


def learning_rate(params: Mapping[str, Any], global_batch_size: int | None = None,
                  reference_batch_size: int | None = None) -> float | WarmupSchedule:
    """The optimizer's learning rate from params: "learning_rate" under "lr_schedule" (constant, step
    or cosine over "train_steps") after "warmup_steps" of linear warmup (model_fns/lr_schedules.py).

    With "scale_learning_rate" the base rate is multiplied by global_batch_size / reference_batch_size
    (the linear scaling rule for large batches). A constant rate without warmup stays a plain float,
    so the optimizer holds it in a variable exactly as before schedules existed.
    """
    base = float(params["learning_rate"])
    if params.get("scale_learning_rate"):
        if not global_batch_size or not reference_batch_size:
            raise ValueError("scale_learning_rate needs the global batch size.")
        base *= global_batch_size / reference_batch_size
    schedule = WarmupSchedule(base, params.get("lr_schedule", "constant"), params.get("train_steps"),
                              params.get("warmup_steps", 0))
    if schedule.schedule == "constant" and not schedule.warmup_steps:
        return base
    return schedule


def image_tensor(features: Any) -> tf.Tensor:
    """The image batch in `features`: a tensor, or a dict holding one tensor (or an "image(s)" key)."""
    if isinstance(features, Mapping):
        for key in _IMAGE_KEYS:
            if key in features:
                return tf.convert_to_tensor(features[key])
        if len(features) == 1:
            return tf.convert_to_tensor(next(iter(features.values())))
        raise ValueError(
            f"features is a dict with keys {sorted(features)}; pass the images as a tensor or under "
            f"one of {list(_IMAGE_KEYS)}."
        )
    return tf.convert_to_tensor(features)


def predictions(logits: tf.Tensor) -> dict[str, tf.Tensor]:
    """"classes" (int64 argmax) and "probabilities" (float32 softmax) for every example."""
    logits = tf.cast(logits, tf.float32)
    return {"classes": tf.argmax(logits, axis=-1, output_type=tf.int64), "probabilities": tf.nn.softmax(logits)}


class ConfusionMatrix(keras.metrics.Metric):
    """[true, predicted] counts, int64 [num_classes, num_classes], over every batch the metric is updated with.

    Counted in float32 (exact to 2**24 per cell), so the variable lives on any device as accuracy's do.
    """

    def __init__(self, num_classes: int, name: str = CONFUSION_MATRIX, **kwargs: Any):
        super().__init__(name=name, **kwargs)
        self.num_classes = int(num_classes)
        self.counts = self.add_variable(shape=(self.num_classes, self.num_classes), initializer="zeros",
                                        dtype="float32", name="counts")

    def update_state(self, labels: tf.Tensor, logits: tf.Tensor, sample_weight: tf.Tensor | None = None) -> None:
        predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
        counts = tf.math.confusion_matrix(tf.reshape(tf.cast(labels, tf.int32), [-1]), predicted, self.num_classes,
                                          weights=sample_weight, dtype=tf.float32)
        self.counts.assign_add(counts)

    def result(self) -> tf.Tensor:
        return tf.cast(tf.convert_to_tensor(self.counts), tf.int64)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_classes": self.num_classes}


def metric_fn(labels: tf.Tensor, logits: tf.Tensor, *,
              confusion_matrix: bool = False) -> dict[str, keras.metrics.Metric]:
    """Accuracy over the real examples of an evaluation (run on the host by the engine), and with
    `confusion_matrix` their [true, predicted] counts (ConfusionMatrix) under CONFUSION_MATRIX.

    The matrix comes from the evaluation itself (the same batches, the same rows as its accuracy), so
    --plot needs no second pass over the test set.
    """
    accuracy = keras.metrics.SparseCategoricalAccuracy(name="accuracy")
    accuracy.update_state(labels, logits)
    metrics: dict[str, keras.metrics.Metric] = {"accuracy": accuracy}
    if confusion_matrix:
        matrix = ConfusionMatrix(logits.shape[-1])
        matrix.update_state(labels, logits)
        metrics[CONFUSION_MATRIX] = matrix
    return metrics


def batch_accuracy(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    """The fraction of the batch whose argmax is its label (float32 scalar; 0 for an empty batch).

    labels: [b] or [b, 1] class ids; logits: [b, num_classes].
    """
    predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
    right = tf.cast(tf.equal(predicted, tf.reshape(tf.cast(labels, tf.int32), [-1])), tf.float32)
    return tf.math.divide_no_nan(tf.reduce_sum(right), tf.cast(tf.size(right), tf.float32))


def _cross_entropy(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    # From logits (log-softmax inside), so large logits cannot overflow or give log(0).
    per_example = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    return tf.reduce_mean(tf.cast(per_example, tf.float32))


def classifier_spec(
    mode: str,
    logits: tf.Tensor,
    labels: tf.Tensor | None,
    make_optimizer: Callable[[], keras.optimizers.Optimizer],
    trainable_variables: Sequence[Any],
    regularization: tf.Tensor | None = None,
    confusion_matrix: bool = False,
) -> TPUEstimatorSpec:
    """The TPUEstimatorSpec for `mode` from a classifier's logits [b, num_classes].

    loss = mean sparse cross-entropy (+ `regularization`, e.g. weight decay, in TRAIN and EVAL);
    TRAIN applies `make_optimizer()` through CrossShardOptimizer and reports the batch's accuracy to
    the engine (train_metrics: the progress line and TensorBoard's train `accuracy`, as Keras fit shows
    it; computed in the step, written outside it, so XLA-compiled steps work); EVAL reports accuracy,
    and with `confusion_matrix` (params[CONFUSION_MATRIX]) the evaluation's confusion matrix.
    """
    logits = tf.cast(logits, tf.float32)
    if mode == ModeKeys.PREDICT:
        return TPUEstimatorSpec(mode, predictions=predictions(logits))
    if labels is None:
        raise ValueError(f"model_fn needs labels in mode {mode!r}.")
    labels = tf.convert_to_tensor(labels)
    if not labels.dtype.is_integer:  # tf.estimator's MultiClassHead refused them too: a cast would truncate 2.7 to 2
        raise ValueError(f"labels are {labels.dtype.name}; this classifier's sparse cross-entropy needs integer class "
                         "ids 0..num_classes-1: give the input_fn int32 labels (tf.cast(labels, tf.int32) if they "
                         "are whole numbers).")
    labels = tf.reshape(tf.cast(labels, tf.int32), [-1])
    loss = _cross_entropy(labels, logits)
    if regularization is not None:
        loss = loss + tf.cast(regularization, tf.float32)
    if mode == ModeKeys.TRAIN:
        train_metrics.report("accuracy", batch_accuracy(labels, logits), weight=tf.shape(logits)[0])
        optimizer = CrossShardOptimizer(make_optimizer())
        return TPUEstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss, var_list=list(trainable_variables)))
    if mode == ModeKeys.EVAL:
        metrics = functools.partial(metric_fn, confusion_matrix=True) if confusion_matrix else metric_fn
        return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metrics, [labels, logits]))
    raise ValueError(f"Unknown mode {mode!r}; expected one of {list(ModeKeys.ALL)}.")
