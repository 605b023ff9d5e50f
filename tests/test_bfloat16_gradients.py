"""bfloat16 gradients as Keras's train step computes them: TF1 gradient gating never reaches them.

On the CPU a convolution's bias gradient is summed in float32 only when TensorFlow's oneDNN
rewrite computes it with the filter gradient; TF1's per-op gating (gate_gradients=GATE_OP, the v1
optimizers' default) stops that rewrite, and the plain kernel sums bfloat16 in bfloat16
(estimators/compat/gradient_gating.py). That cost the built-in cnn 4 points in bfloat16 without an
error, so each path that differentiates a model_fn's loss is pinned here.
"""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec, precision

BATCH, SIDE, CHANNELS, FILTERS, CLASSES = 32, 8, 3, 16, 3
_rng = np.random.default_rng(0)
IMAGES = _rng.normal(size=(BATCH, SIDE, SIDE, CHANNELS)).astype(np.float32)
UPSTREAM = _rng.normal(0.05, 1.0, size=(BATCH, SIDE, SIDE, FILTERS)).astype(np.float32)  # d loss / d conv output
LABELS = _rng.integers(0, CLASSES, size=BATCH).astype(np.int32)
KERNEL = (0.3 * _rng.normal(size=(3, 3, CHANNELS, FILTERS))).astype(np.float32)
DENSE = (0.3 * _rng.normal(size=(SIDE * SIDE * FILTERS, CLASSES))).astype(np.float32)
# The bias gradient of loss = sum(conv(x) * UPSTREAM): the upstream rounded to bfloat16 (its Cast), summed exactly.
EXACT_BIAS_GRADIENT = tf.cast(tf.cast(UPSTREAM, tf.bfloat16), tf.float64).numpy().sum(axis=(0, 1, 2))


def _conv() -> keras.layers.Conv2D:
    with precision.policy_scope(precision.BFLOAT16):
        layer = keras.layers.Conv2D(FILTERS, 3, padding="same", kernel_initializer=keras.initializers.Constant(KERNEL))
    layer.build(IMAGES.shape)
    return layer


def _loss(layer: keras.layers.Conv2D) -> tf.Tensor:
    return tf.reduce_sum(tf.cast(layer(IMAGES), tf.float32) * UPSTREAM)


def _tape_gradients(layer: keras.layers.Conv2D) -> list[np.ndarray]:
    """Kernel and bias gradients as Keras's train step takes them (both used, so neither is pruned)."""

    @tf.function
    def gradients():
        with tf.GradientTape() as tape:
            loss = _loss(layer)
        return tape.gradient(loss, [layer.kernel, layer.bias])

    return [g.numpy() for g in gradients()]


@functools.cache
def _tape_sums_bias_in_float32() -> bool:
    return bool(np.allclose(_tape_gradients(_conv())[1].astype(np.float64), EXACT_BIAS_GRADIENT, rtol=0.01))


def _require_float32_bias_sums() -> None:
    """Skips where this TensorFlow sums a GradientTape's bfloat16 bias gradient in bfloat16 too (no oneDNN)."""
    if not _tape_sums_bias_in_float32():
        pytest.skip("this TensorFlow build sums bfloat16 bias gradients in bfloat16 on every path; nothing to pin")


def test_cross_shard_optimizer_takes_a_gradient_tapes_bfloat16_gradients():
    _require_float32_bias_sums()
    layer, optimizer = _conv(), CrossShardOptimizer(keras.optimizers.SGD())

    @tf.function
    def ours():
        pairs = optimizer.compute_gradients(_loss(layer), [layer.kernel, layer.bias])
        return [g for g, _ in pairs]

    got = [g.numpy() for g in ours()]
    for ours_gradient, tape_gradient in zip(got, _tape_gradients(layer), strict=True):
        np.testing.assert_array_equal(ours_gradient, tape_gradient)
    np.testing.assert_allclose(got[1].astype(np.float64), EXACT_BIAS_GRADIENT, rtol=0.01)


def _v1_model_fn(features, labels, mode, params):
    """A TF1-style bfloat16 conv (get_variable, casts as tf.tpu.bfloat16_scope made them) under a v1 optimizer."""
    kernel = tf.compat.v1.get_variable("conv/kernel", initializer=KERNEL)
    bias = tf.compat.v1.get_variable("conv/bias", initializer=np.zeros(FILTERS, np.float32))
    conv = tf.nn.conv2d(tf.cast(features, tf.bfloat16), tf.cast(kernel, tf.bfloat16), 1, "SAME")
    outputs = tf.nn.bias_add(conv, tf.cast(bias, tf.bfloat16))
    loss = tf.reduce_sum(tf.cast(outputs, tf.float32) * labels)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(1.0).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def test_a_v1_optimizer_in_model_fn_sums_a_bfloat16_bias_gradient_in_float32(tmp_path):
    _require_float32_bias_sums()

    def input_fn(params):
        return tf.data.Dataset.from_tensors((IMAGES, UPSTREAM)).repeat()

    estimator = TPUEstimator(_v1_model_fn, config=RunConfig(model_dir=str(tmp_path)), use_tpu=False,
                             train_batch_size=BATCH)
    estimator.train(input_fn, max_steps=1)
    # One step of gradient descent at rate 1 from a zero bias: the bias is minus its gradient.
    bias_gradient = -estimator.get_variable_value("conv/bias").astype(np.float64)
    np.testing.assert_allclose(bias_gradient, EXACT_BIAS_GRADIENT, rtol=0.01)


def _network(computes_in: str) -> keras.Sequential:
    """Conv -> Flatten -> Dense with fixed initial weights (no dropout: the two runs draw nothing)."""
    with precision.policy_scope(computes_in):
        return keras.Sequential([
            keras.Input((SIDE, SIDE, CHANNELS)),
            keras.layers.Conv2D(FILTERS, 3, padding="same", activation="elu",
                                kernel_initializer=keras.initializers.Constant(KERNEL)),
            keras.layers.Flatten(),
            keras.layers.Dense(CLASSES, kernel_initializer=keras.initializers.Constant(DENSE)),
        ])


def _network_model_fn(features, labels, mode, params):
    network = _network(params["precision"])
    logits = tf.cast(network(features, training=mode == ModeKeys.TRAIN), tf.float32)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    train_op = CrossShardOptimizer(keras.optimizers.Adam(0.01)).minimize(loss, var_list=network.trainable_variables)
    return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("computes_in", [precision.FLOAT32, precision.BFLOAT16])
def test_tpu_estimator_steps_equal_keras_fits_bit_for_bit(tmp_path, computes_in):
    if computes_in == precision.BFLOAT16:
        _require_float32_bias_sums()
    steps = 3

    def input_fn(params):
        return tf.data.Dataset.from_tensors((IMAGES, LABELS)).repeat()

    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(iterations_per_loop=steps))
    estimator = TPUEstimator(_network_model_fn, config=config, params={"precision": computes_in}, use_tpu=False,
                             train_batch_size=BATCH)
    estimator.train(input_fn, max_steps=steps)

    keras_network = _network(computes_in)
    keras_network.compile(optimizer=keras.optimizers.Adam(0.01),
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)
    keras_network.fit(input_fn({}), steps_per_epoch=steps, epochs=1, verbose=0, shuffle=False)

    names = ["conv2d/kernel", "conv2d/bias", "dense/kernel", "dense/bias"]  # tf.estimator's names for its layers
    for name, keras_weight in zip(names, keras_network.weights, strict=True):
        np.testing.assert_array_equal(estimator.get_variable_value(name), keras_weight.numpy(), err_msg=name)
