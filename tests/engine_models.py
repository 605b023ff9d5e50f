"""Tiny model_fns and input_fns the engine tests share (hand-computable where it matters)."""

import keras
import numpy as np
import tensorflow as tf

from estimators import CrossShardOptimizer, EstimatorSpec, ModeKeys, TPUEstimatorSpec

FEATURES = 4
CLASSES = 3


def dataset(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n examples of FEATURES floats, labels from a fixed linear rule (learnable)."""
    rng = np.random.RandomState(seed)
    x = rng.randn(n, FEATURES).astype("float32")
    y = np.argmax(x[:, :CLASSES], axis=1).astype("int32")
    return x, y


def train_input_fn(x: np.ndarray, y: np.ndarray):
    def input_fn(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params["batch_size"], drop_remainder=True)

    return input_fn


def eval_input_fn(x: np.ndarray, y: np.ndarray):
    def input_fn(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(params["batch_size"])

    return input_fn


def predict_input_fn(x: np.ndarray):
    def input_fn(params):
        return tf.data.Dataset.from_tensor_slices(x).batch(params["batch_size"])

    return input_fn


def linear_model() -> keras.Model:
    """A Dense layer with seeded initial weights: every fresh estimator starts identically."""
    return keras.Sequential([
        keras.layers.Dense(CLASSES, kernel_initializer=keras.initializers.GlorotUniform(seed=7),
                           bias_initializer="zeros"),
    ])


def linear_model_fn(features, labels, mode, params):
    """Softmax regression with SGD (or Adam with params['adam']) behind CrossShardOptimizer."""
    logits = linear_model()(features, training=mode == ModeKeys.TRAIN)
    if mode == ModeKeys.PREDICT:
        return TPUEstimatorSpec(mode, predictions={"logits": logits, "classes": tf.argmax(logits, 1)})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == ModeKeys.TRAIN:
        inner = keras.optimizers.Adam(0.05) if params.get("adam") else keras.optimizers.SGD(params.get("lr", 0.5))
        optimizer = CrossShardOptimizer(inner, reduction=params.get("reduction", "mean"))
        return TPUEstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss))

    def metric_fn(labels, logits):
        accuracy = keras.metrics.SparseCategoricalAccuracy()
        accuracy.update_state(labels, logits)
        count = keras.metrics.Sum()
        count.update_state(tf.ones_like(labels, tf.float32))
        return {"accuracy": accuracy, "examples": count}

    return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))


def keras_metrics_model_fn(features, labels, mode):
    """tf.estimator style: EstimatorSpec with eval_metric_ops updated inside model_fn."""
    logits = linear_model()(features)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions=tf.argmax(logits, 1))
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == ModeKeys.TRAIN:
        return EstimatorSpec(mode, loss=loss, train_op=CrossShardOptimizer(keras.optimizers.SGD(0.5)).minimize(loss))
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    accuracy.update_state(labels, logits)
    return EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})


def numpy_eval(kernel: np.ndarray, bias: np.ndarray, x: np.ndarray, y: np.ndarray,
               batch_size: int | None = None) -> tuple[float, float]:
    """Exact mean cross-entropy and accuracy of the linear model, by hand.

    batch_size: the loss as 2.15's TPUEstimator(use_tpu=False) reported it, the mean of the batches' mean losses.
    """
    logits = x @ kernel + bias
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    losses = -log_probs[np.arange(len(y)), y]
    if batch_size is not None:
        losses = [batch.mean() for batch in np.split(losses, range(batch_size, len(losses), batch_size))]
    return float(np.mean(losses)), float((logits.argmax(1) == y).mean())
