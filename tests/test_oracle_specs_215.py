"""Behaviours of tf.estimator 2.15 found by its own unit tests (bench/estimator_oracle), each pinned to what 2.15
did: EstimatorSpec's default Scaffold, the graph-level seed and global step model_fn sees, and export through a
Scaffold whose saver is a tf.train.Checkpoint."""

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


def test_without_runconfigs_seed_model_fn_sees_the_processs_seed_and_the_global_step(tmp_path, process_seed):
    """Deliberately unlike 2.15 (whose fresh graph had RunConfig's seed, None, whatever tf.random.set_seed the
    process called): a program that seeds TensorFlow globally and leaves tf_random_seed None stays reproducible
    here, so model_fn's graph seed is the process's. The global step exists in every mode, as in 2.15."""
    estimator = _estimator(tmp_path)
    estimator.train(_input_fn, steps=1)
    estimator.evaluate(_input_fn, steps=1)
    next(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(X).batch(4)))
    assert len(SEEN) >= 3
    assert all(s == {"seed": process_seed, "has_global_step": True} for s in SEEN), SEEN
    assert context.global_seed() == process_seed


def test_model_fn_sees_runconfigs_seed_when_it_is_set(tmp_path, process_seed):
    """With RunConfig(tf_random_seed=42) 2.15's graph seed in model_fn was 42, in every mode."""
    estimator = _estimator(tmp_path, seed=42)
    estimator.train(_input_fn, steps=1)
    estimator.evaluate(_input_fn, steps=1)
    assert SEEN and all(s == {"seed": 42, "has_global_step": True} for s in SEEN), SEEN
    assert context.global_seed() == process_seed


def test_a_scaffold_saving_through_a_tf_train_checkpoint_exports_a_servable_model(tmp_path):
    """2.15 exported with a graph Saver of the objects a Checkpoint given as Scaffold(saver=...) tracks
    (object_checkpointing_test's testSavedModelExport); the export serves the trained weights."""

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.ones_initializer())
        step = tf.compat.v1.train.get_or_create_global_step()
        scaffold = tf.compat.v1.train.Scaffold(saver=tf.train.Checkpoint(step=step, w=w))
        if isinstance(features, dict):  # a serving receiver's single tensor, as 2.15 keyed it
            features = features["feature"]
        predictions = tf.matmul(features, w)
        if mode == estimators.ModeKeys.PREDICT:
            return estimators.EstimatorSpec(mode, predictions={"y": predictions}, scaffold=scaffold)
        train_op = tf.group(w.assign_add(tf.ones([2, 1])), step.assign_add(1))
        return estimators.EstimatorSpec(mode, loss=tf.reduce_sum(predictions), train_op=train_op, scaffold=scaffold)

    estimator = estimators.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    estimator.train(_input_fn, steps=2)

    def receiver():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return estimators.export.ServingInputReceiver(x, {"x": x})

    exported = estimator.export_saved_model(str(tmp_path / "export"), receiver)
    served = tf.saved_model.load(exported).signatures["serving_default"](x=tf.constant([[1.0, 2.0]]))
    np.testing.assert_allclose(served["y"].numpy(), [[9.0]])  # w is 3 after two steps: 1*3 + 2*3
