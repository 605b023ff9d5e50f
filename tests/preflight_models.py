"""A tiny TPU-ready model_fn and its broken variants, each with one thing a TPU rejects (tests/test_preflight.py).

`model_fn` reads params["break"] to pick the breakage, so every variant is the same model
with one line changed; the line numbers in preflight's report point at these lines.
"""

import keras
import numpy as np
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, TPUEstimatorSpec

FEATURES = 4
CLASSES = 3


def _double(x):
    return x * 2


def _broken(features, breakage):
    """features, after the params["break"] breakage (None: unchanged)."""
    if breakage == "py_function":
        doubled = tf.py_function(_double, [features], tf.float32)
        doubled.set_shape(features.shape)
        return doubled
    if breakage == "numpy_function":
        doubled = tf.numpy_function(_double, [features], tf.float32)
        doubled.set_shape(features.shape)
        return doubled
    if breakage == "float64":
        return tf.cast(tf.cast(features, tf.float64) * 2.0, tf.float32)
    if breakage == "string":
        return features + tf.strings.to_number(tf.strings.as_string(features))
    if breakage == "boolean_mask":
        kept = tf.boolean_mask(features, features[:, 0] > 0)
        return features + tf.reduce_sum(kept)
    return features


def model_fn(features, labels, mode, params):
    """Softmax regression behind CrossShardOptimizer; params["break"] adds one TPU problem."""
    features = _broken(features, params.get("break"))
    layer = keras.layers.Dense(CLASSES)
    logits = layer(features)
    if mode == ModeKeys.PREDICT:
        return TPUEstimatorSpec(mode, predictions={"classes": tf.argmax(logits, 1)})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == ModeKeys.TRAIN and params.get("bare_optimizer"):  # a Keras optimizer without CrossShardOptimizer
        variables = [v.value for v in layer.trainable_variables]
        train_op = keras.optimizers.SGD(0.1).apply_gradients(zip(tf.gradients(loss, variables), variables, strict=True))
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
    if mode == ModeKeys.TRAIN:
        return TPUEstimatorSpec(mode, loss=loss, train_op=CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss))

    def metric_fn(labels, logits):
        accuracy = keras.metrics.SparseCategoricalAccuracy()
        accuracy.update_state(labels, logits)
        return {"accuracy": accuracy}

    return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))


def image_model_fn(features, labels, mode, params):
    """model_fn on raw uint8 images (main.py's datasets): flattened to floats first."""
    images = tf.cast(features, tf.float32) / 255.0
    flat = tf.reshape(images, [images.shape[0], -1])[:, :FEATURES]
    return model_fn(flat, labels, mode, params)


def data(n: int = 64) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    x = rng.randn(n, FEATURES).astype("float32")
    return x, np.argmax(x[:, :CLASSES], axis=1).astype("int32")


def input_fn(params, mode=None, drop_remainder=True, dtype="float32"):
    """(features, labels) batches of params["batch_size"]; train repeats, eval/predict end."""
    x, y = data()
    dataset = tf.data.Dataset.from_tensor_slices((x.astype(dtype), y))
    if mode == ModeKeys.TRAIN:
        dataset = dataset.repeat()
    return dataset.batch(params["batch_size"], drop_remainder=drop_remainder and mode == ModeKeys.TRAIN)
