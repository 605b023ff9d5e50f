"""RunConfig(tf_random_seed=...): as 2.15 seeded every call's graph, equal seeds give equal weights after
training (initializers, dropout, unseeded shuffles), other seeds differ, for Estimator and TPUEstimator,
on one replica and on eight."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, Estimator, EstimatorSpec, ModeKeys, RunConfig, TPUConfig, TPUEstimator
from tests import engine_models as m


def _random_model_fn(features, labels, mode, params):
    """Unseeded initializers (Keras and tf.compat.v1), unseeded dropout and a random op in the loss."""
    hidden = keras.layers.Dense(8, activation="relu")(features)
    hidden = keras.layers.Dropout(0.5)(hidden, training=mode == ModeKeys.TRAIN)
    logits = keras.layers.Dense(m.CLASSES, kernel_initializer=tf.compat.v1.random_normal_initializer())(hidden)
    noise = tf.random.uniform([]) * 1e-3
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)) + noise
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    if params.get("cross_shard"):
        optimizer = CrossShardOptimizer(optimizer)
    return EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss))


def _shuffled_input_fn(params):
    x, y = m.dataset(64)
    batch = params.get("batch_size", 16)
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64).repeat().batch(batch, drop_remainder=True)


def _trained(model_dir, seed, tpu=False, strategy=None):
    config = RunConfig(model_dir=str(model_dir), tf_random_seed=seed, train_distribute=strategy,
                       tpu_config=TPUConfig(iterations_per_loop=3))
    if tpu:
        estimator = TPUEstimator(_random_model_fn, config=config, params={"cross_shard": True}, use_tpu=False,
                                 train_batch_size=16)
    else:
        estimator = Estimator(_random_model_fn, config=config)
    estimator.train(_shuffled_input_fn, max_steps=3)
    return {name: estimator.get_variable_value(name) for name in estimator.get_variable_names()
            if name != "global_step"}


def _assert_seeded(runs):
    first, second, other = runs
    assert sorted(first) == sorted(second) == sorted(other)
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)
    for name in ("dense/kernel", "dense_1/kernel"):
        assert not np.array_equal(first[name], other[name]), name


def _three_runs(tmp_path, **kwargs):
    first = _trained(tmp_path / "a", 42, **kwargs)
    keras.layers.Dense(3).build((None, 2))  # draws from the generators between the runs
    tf.random.uniform([2])
    return first, _trained(tmp_path / "b", 42, **kwargs), _trained(tmp_path / "c", 43, **kwargs)


def test_estimator_with_the_same_seed_trains_to_identical_weights_and_another_seed_differs(tmp_path):
    _assert_seeded(_three_runs(tmp_path))


@pytest.mark.parametrize("replicas", [1, 8])
def test_tpu_estimator_with_the_same_seed_trains_to_identical_weights_and_another_seed_differs(
        tmp_path, replicas, eight_replicas):
    _assert_seeded(_three_runs(tmp_path, tpu=True, strategy=eight_replicas if replicas == 8 else None))
