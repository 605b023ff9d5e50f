"""Behaviours of tf.estimator 2.15 found by its own unit tests (bench/estimator_oracle), each pinned to what 2.15
did: EstimatorSpec's default Scaffold, and the graph-level seed and global step model_fn sees."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.eager import context

import estimators

X = np.arange(16, dtype=np.float32).reshape(8, 2) / 8.0
Y = X.sum(axis=1, keepdims=True)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(4)


SEEN: list[dict] = []  # what each _linear_model_fn call saw; emptied by every _estimator()


def _linear_model_fn(features, labels, mode, params):
    """A one-variable regression that records what it saw in SEEN; params["wrap"] rebuilds the spec."""
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features, w)
    SEEN.append({"seed": tf.compat.v1.get_default_graph().seed,
                           "has_global_step": tf.compat.v1.train.get_global_step() is not None})
    if mode == estimators.ModeKeys.PREDICT:
        return estimators.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    spec = estimators.EstimatorSpec(mode, loss=loss, train_op=train_op)
    if params.get("wrap"):  # a wrapper that copies every field of the spec it got, scaffold included
        spec = estimators.EstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op, scaffold=spec.scaffold)
    return spec


def _estimator(tmp_path, seed=None, execution=None, **params):
    config = estimators.RunConfig(model_dir=str(tmp_path), tf_random_seed=seed, execution=execution)
    SEEN.clear()
    return estimators.Estimator(_linear_model_fn, config=config, params=params)


def test_a_spec_built_without_a_scaffold_holds_an_empty_scaffold():
    """2.15's EstimatorSpec replaced scaffold=None by tf.compat.v1.train.Scaffold() (model_fn._validate_scaffold),
    in every mode: a Scaffold with no init_op, saver, init_fn or local_init_op of its own."""
    with tf.Graph().as_default():
        specs = (estimators.EstimatorSpec(estimators.ModeKeys.TRAIN, loss=tf.constant(1.0), train_op=tf.no_op()),
                 estimators.EstimatorSpec(estimators.ModeKeys.PREDICT, predictions=tf.constant([1.0])))
    for spec in specs:
        scaffold = spec.scaffold
        assert isinstance(scaffold, tf.compat.v1.train.Scaffold)
        parts = (scaffold.init_op, scaffold.saver, scaffold.init_fn, scaffold.local_init_op, scaffold.ready_op)
        assert parts == (None,) * 5


def test_a_spec_keeps_the_scaffold_it_was_given_and_replace_keeps_the_default():
    """2.15 kept a given Scaffold as it was; _replace built a new spec from the fields, the Scaffold among them."""
    given = tf.compat.v1.train.Scaffold()
    with tf.Graph().as_default():
        spec = estimators.EstimatorSpec(estimators.ModeKeys.TRAIN, loss=tf.constant(1.0), train_op=tf.no_op(),
                                        scaffold=given)
        plain = estimators.EstimatorSpec(estimators.ModeKeys.TRAIN, loss=tf.constant(1.0), train_op=tf.no_op())
        replaced = plain._replace(loss=tf.constant(2.0))
    assert spec.scaffold is given
    assert replaced.scaffold is plain.scaffold


@pytest.mark.parametrize("wrap", [False, True])
def test_the_default_scaffold_keeps_a_model_fn_on_the_tf2_path(tmp_path, wrap):
    """2.15 ran every model_fn in a session; here only a Scaffold the model_fn made asks for one: the default one,
    passed on by a wrapper or not, leaves the program on the TF2 path (and RunConfig(execution='tf2') accepts it)."""
    estimator = _estimator(tmp_path / "chosen", wrap=wrap).train(_input_fn, steps=2)
    assert estimator._execution is None
    pinned = _estimator(tmp_path / "pinned", execution="tf2", wrap=wrap).train(_input_fn, steps=2)
    assert pinned.get_variable_value("global_step") == 2


@pytest.fixture
def process_seed():
    """tf.random.set_seed(5) for the test, the process's unseeded state put back after it."""
    tf.random.set_seed(5)
    yield 5
    context.context()._set_global_seed(None)  # noqa: SLF001 - the state tf.random.set_seed(None) cannot restore


def test_model_fn_sees_runconfigs_seed_none_not_the_processs_seed(tmp_path, process_seed):
    """2.15 built each call's graph anew with RunConfig's tf_random_seed as its seed (None by default), whatever
    tf.random.set_seed the process called: tf.compat.v1.get_default_graph().seed was None in model_fn in train,
    evaluate and predict, and the global step existed (estimator_test's
    test_graph_initialization_global_step_and_random_seed). The process's seed is as before afterwards."""
    estimator = _estimator(tmp_path)
    estimator.train(_input_fn, steps=1)
    estimator.evaluate(_input_fn, steps=1)
    next(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(X).batch(4)))
    assert len(SEEN) >= 3
    assert all(s == {"seed": None, "has_global_step": True} for s in SEEN), SEEN
    assert context.global_seed() == process_seed


def test_model_fn_sees_runconfigs_seed_when_it_is_set(tmp_path, process_seed):
    """With RunConfig(tf_random_seed=42) 2.15's graph seed in model_fn was 42, in every mode."""
    estimator = _estimator(tmp_path, seed=42)
    estimator.train(_input_fn, steps=1)
    estimator.evaluate(_input_fn, steps=1)
    assert SEEN and all(s == {"seed": 42, "has_global_step": True} for s in SEEN), SEEN
    assert context.global_seed() == process_seed
