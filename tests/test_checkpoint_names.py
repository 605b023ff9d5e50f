"""Issue 8.1: a checkpoint key depends only on what model_fn builds, and is the name tf.estimator 2.15 wrote.

Not on iterations_per_loop, on which mode ran first, on the replica count or on the process; a layer that
only TRAIN builds, created before the shared ones, never leaves evaluation with the wrong kernel.
"""

import json
import os
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import (
    CrossShardOptimizer,
    Estimator,
    EstimatorSpec,
    ModeKeys,
    RunConfig,
    TPUConfig,
    TPUEstimator,
    TPUEstimatorSpec,
)
from estimators.checkpoint.checkpointer import CheckpointMismatchError
from tests import checkpoint_names_cases as cases
from tests import engine_models as m
from tests import launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT_POSITION = "estimators/input_position"  # the engine's own addition to every checkpoint
with open(os.path.join(ROOT, "tests", "reference", "checkpoint_names_215.json")) as _f:
    NAMES_215 = json.load(_f)["cases"]


def _tpu_estimator(model_dir, iterations=1, strategy=None, model_fn=m.linear_model_fn):
    config = RunConfig(model_dir=str(model_dir), save_checkpoints_steps=1000, train_distribute=strategy,
                       tpu_config=TPUConfig(iterations_per_loop=iterations))
    return TPUEstimator(model_fn, config=config, use_tpu=False, params={"adam": True}, train_batch_size=16,
                        eval_batch_size=16, predict_batch_size=16)


def _values(estimator) -> dict:
    return {name: estimator.get_variable_value(name) for name in estimator.get_variable_names()}


def _assert_same_values(actual: dict, expected: dict, rtol: float = 0.0) -> None:
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, rtol=rtol, atol=0.0, err_msg=name)


def _four_batches():
    return m.train_input_fn(*m.dataset(64))


def _in_new_process(code: str) -> dict:
    """Runs `code` (which prints one JSON line last) in a fresh interpreter; returns that JSON."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    done = launcher.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- iterations_per_loop, mode order, replicas ------------------------------------------------------------

@pytest.mark.parametrize("first,second", [(1, 5), (5, 1)])
def test_resuming_with_another_iterations_per_loop_keeps_every_name_and_value(tmp_path, first, second):
    _tpu_estimator(tmp_path / "split", first).train(_four_batches(), max_steps=6)
    resumed = _tpu_estimator(tmp_path / "split", second).train(_four_batches(), max_steps=12)
    straight = _tpu_estimator(tmp_path / "straight", first).train(_four_batches(), max_steps=12)
    # Same ops on the same batches in one process: the only difference allowed is none.
    _assert_same_values(_values(resumed), _values(straight))


def _bn_model_fn(features, labels, mode):
    """Dense -> BatchNormalization -> Dense with default names; EVAL also builds a Keras metric inside model_fn."""
    hidden = keras.layers.Dense(8, activation="relu", kernel_initializer=keras.initializers.GlorotUniform(seed=1))
    norm = keras.layers.BatchNormalization()
    out = keras.layers.Dense(m.CLASSES, kernel_initializer=keras.initializers.GlorotUniform(seed=2))
    logits = out(norm(hidden(features), training=mode == ModeKeys.TRAIN))
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == ModeKeys.TRAIN:
        return EstimatorSpec(mode, loss=loss, train_op=CrossShardOptimizer(keras.optimizers.Adam(0.05)).minimize(loss))
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    accuracy.update_state(labels, logits)
    return EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})


def _bn_estimator(model_dir):
    return Estimator(_bn_model_fn, config=RunConfig(model_dir=str(model_dir), save_checkpoints_steps=1000))


def _global_batches(n: int = 64):
    x, y = m.dataset(n)
    return lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16, drop_remainder=True)


def test_evaluating_before_training_changes_no_name_and_no_value(tmp_path):
    x, y = m.dataset(32)
    first_eval = _bn_estimator(tmp_path / "eval_first")
    first_eval.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(16))  # no checkpoint: initial weights
    first_eval.train(_global_batches(), max_steps=5)
    straight = _bn_estimator(tmp_path / "straight").train(_global_batches(), max_steps=5)
    assert first_eval.get_variable_names() == [
        "adam/iteration", "batch_normalization/beta", "batch_normalization/beta/Adam",
        "batch_normalization/beta/Adam_1", "batch_normalization/gamma", "batch_normalization/gamma/Adam",
        "batch_normalization/gamma/Adam_1", "batch_normalization/moving_mean", "batch_normalization/moving_variance",
        "dense/bias", "dense/bias/Adam", "dense/bias/Adam_1", "dense/kernel", "dense/kernel/Adam",
        "dense/kernel/Adam_1", "dense_1/bias", "dense_1/bias/Adam", "dense_1/bias/Adam_1", "dense_1/kernel",
        "dense_1/kernel/Adam", "dense_1/kernel/Adam_1", "global_step",
    ]
    _assert_same_values(_values(first_eval), _values(straight))


@pytest.mark.parametrize("first", ["eight", "one"])
def test_a_checkpoint_moves_between_eight_replicas_and_one_with_its_names(tmp_path, eight_replicas, first):
    strategies = {"eight": eight_replicas, "one": None}
    second = "one" if first == "eight" else "eight"
    x, y = m.dataset(320)
    _tpu_estimator(tmp_path / "moved", 5, strategies[first]).train(m.train_input_fn(x, y), max_steps=5)
    moved = _tpu_estimator(tmp_path / "moved", 5, strategies[second]).train(m.train_input_fn(x, y), max_steps=10)
    straight = _tpu_estimator(tmp_path / "straight", 5).train(m.train_input_fn(x, y), max_steps=10)
    assert moved.get_variable_names() == straight.get_variable_names()
    # 8 replicas all-reduce the mean gradient: the same steps as one replica up to float summation order.
    _assert_same_values(_values(moved), _values(straight), rtol=1e-5)


# -- a layer only TRAIN builds, created before the shared ones ----------------------------------------------

def _train_only_head_first(aux_units: int, named: bool):
    """TRAIN builds an auxiliary head before the shared classifier (its loss is added); EVAL builds only the latter."""

    def model_fn(features, labels, mode):
        loss = tf.constant(0.0)
        if mode == ModeKeys.TRAIN:
            aux = keras.layers.Dense(aux_units, name="aux" if named else None,
                                     kernel_initializer=keras.initializers.GlorotUniform(seed=5))(features)
            loss += 0.1 * tf.reduce_mean(tf.square(aux))
        logits = keras.layers.Dense(m.CLASSES, name="classifier" if named else None,
                                    kernel_initializer=keras.initializers.GlorotUniform(seed=7))(features)
        loss += tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        if mode == ModeKeys.TRAIN:
            train_op = CrossShardOptimizer(keras.optimizers.SGD(0.5)).minimize(loss)
            return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
        return TPUEstimatorSpec(mode, loss=loss)

    return model_fn


def _train_only_estimator(model_dir, aux_units: int, named: bool):
    config = RunConfig(model_dir=str(model_dir), tpu_config=TPUConfig(iterations_per_loop=1))
    return TPUEstimator(_train_only_head_first(aux_units, named), config=config, use_tpu=False, train_batch_size=16,
                        eval_batch_size=16)


# What a new process does with model_dirs this one trains: evaluate the two train-only-layer models, and
# train the keras_layers case (one interpreter for all, to keep the suite fast).
_NEW_PROCESS = """
    import json
    from estimators import Estimator, EstimatorSpec, ModeKeys
    from tests import checkpoint_names_cases as cases
    from tests import engine_models as m
    from tests.test_checkpoint_names import _train_only_estimator
    x, y = m.dataset(32)
    out = {{}}
    for key, aux_units, named in (("named", 3, True), ("auto_named", 5, False)):
        try:
            result = _train_only_estimator({root!r} + "/" + key, aux_units, named).evaluate(m.eval_input_fn(x, y))
            out[key] = {{"loss": result["loss"]}}
        except ValueError as err:
            out[key] = {{"error": type(err).__name__, "message": str(err)}}
    Estimator(cases.keras_layers(EstimatorSpec, ModeKeys.TRAIN), model_dir={root!r} + "/names").train(
        cases.input_fn, max_steps=1)
    print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def new_process(tmp_path_factory):
    """Model_dirs trained here, and what a new process made of them (see _NEW_PROCESS)."""
    root = tmp_path_factory.mktemp("new_process")
    x, y = m.dataset(32)
    named = _train_only_estimator(root / "named", 3, named=True).train(m.train_input_fn(x, y), max_steps=4)
    _train_only_estimator(root / "auto_named", 5, named=False).train(m.train_input_fn(x, y), max_steps=2)
    expected_loss, _ = m.numpy_eval(named.get_variable_value("classifier/kernel"),
                                    named.get_variable_value("classifier/bias"), x, y)
    return {"root": root, "named_loss": expected_loss, **_in_new_process(_NEW_PROCESS.format(root=str(root)))}


def test_named_train_only_layer_first_evaluates_with_the_trained_classifier_here_and_in_a_new_process(new_process):
    x, y = m.dataset(32)
    estimator = _train_only_estimator(new_process["root"] / "named", 3, named=True)
    assert {"aux/kernel", "classifier/kernel"} <= set(estimator.get_variable_names())
    assert estimator.evaluate(m.eval_input_fn(x, y))["loss"] == pytest.approx(new_process["named_loss"], rel=1e-5)
    assert new_process["named"]["loss"] == pytest.approx(new_process["named_loss"], rel=1e-5)


def test_auto_named_train_only_layer_of_another_shape_first_is_a_clear_error_here(tmp_path):
    """TRAIN's first Dense (5 units, train-only) is `dense`; EVAL's first (3 units) asks for `dense` too."""
    x, y = m.dataset(32)
    estimator = _train_only_estimator(tmp_path, 5, named=False).train(m.train_input_fn(x, y), max_steps=2)
    with pytest.raises(ValueError, match=r"'dense/kernel'.*shape.*explicit names"):
        estimator.evaluate(m.eval_input_fn(x, y))


def test_auto_named_train_only_layer_of_another_shape_first_is_a_clear_error_in_a_new_process(new_process):
    assert new_process["auto_named"]["error"] == CheckpointMismatchError.__name__
    assert "dense/kernel (checkpoint [4, 5] float32, model [4, 3] float32)" in new_process["auto_named"]["message"]


# -- the names tf.estimator 2.15 wrote for the same model_fn -----------------------------------------------

@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_names_are_what_tf_estimator_2_15_wrote_for_the_same_model_fn(tmp_path, case):
    model_fn = cases.CASES[case](EstimatorSpec, ModeKeys.TRAIN)
    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(cases.input_fn, max_steps=1)
    ours = [entry for entry in cases.listing(estimator.latest_checkpoint()) if entry[0] != INPUT_POSITION]
    assert ours == NAMES_215[case]


def test_a_new_process_writes_the_names_this_one_does(new_process, tmp_path):
    here = Estimator(cases.keras_layers(EstimatorSpec, ModeKeys.TRAIN), model_dir=str(tmp_path))
    here.train(cases.input_fn, max_steps=1)
    there = Estimator(cases.keras_layers(EstimatorSpec, ModeKeys.TRAIN), model_dir=str(new_process["root"] / "names"))
    assert there.get_variable_names() == here.get_variable_names()
    _assert_same_values(_values(there), _values(here))


def test_training_the_same_model_fn_again_in_this_process_writes_the_same_names(tmp_path):
    """TF1 optimizers name slots through TF1 variable scopes: they must start afresh in every model_fn call."""
    listings = []
    for run in ("first", "second"):
        estimator = Estimator(cases.keras_layers(EstimatorSpec, ModeKeys.TRAIN), model_dir=str(tmp_path / run))
        estimator.train(cases.input_fn, max_steps=1)
        listings.append(cases.listing(estimator.latest_checkpoint()))
    assert listings[1] == listings[0]
    assert ["dense/kernel/Adam_1", [32, 4], "float32"] in listings[1]


def test_a_retrace_of_the_training_loop_changes_no_name(tmp_path):
    """Another input shape retraces the loop (model_fn called again in a new graph): same variables, same names."""
    estimator = Estimator(cases.keras_layers(EstimatorSpec, ModeKeys.TRAIN), model_dir=str(tmp_path))
    estimator.train(cases.input_fn, max_steps=1)
    before = cases.listing(estimator.latest_checkpoint())
    estimator.train(lambda: cases.input_fn().unbatch().batch(2 * cases.BATCH), max_steps=2)
    assert cases.listing(estimator.latest_checkpoint()) == before


def _get_variable_model_fn(features, labels, mode):
    with tf.compat.v1.variable_scope("linear"):
        weights = tf.compat.v1.get_variable("weights", [m.FEATURES, m.CLASSES],
                                            initializer=tf.compat.v1.glorot_uniform_initializer(seed=3))
    logits = tf.matmul(features, weights)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    return EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()))


def test_get_variable_model_fn_trains_evaluates_predicts_and_trains_again_in_one_process(tmp_path):
    """tf.compat.v1.get_variable without reuse: every model_fn call (retrace, loop body, estimator) is a new graph."""
    x, y = m.dataset(32)
    train = _global_batches()
    estimator = Estimator(_get_variable_model_fn, model_dir=str(tmp_path))
    estimator.train(train, max_steps=2)
    weights = estimator.get_variable_value("linear/weights")
    loss, _ = m.numpy_eval(weights, np.zeros(m.CLASSES, np.float32), x, y)
    eval_input = lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(16)  # noqa: E731
    assert estimator.evaluate(eval_input)["loss"] == pytest.approx(loss, rel=1e-5)
    predictions = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(16)))
    np.testing.assert_allclose([p["logits"] for p in predictions], x @ weights, rtol=1e-5, atol=1e-6)
    Estimator(_get_variable_model_fn, model_dir=str(tmp_path)).train(train, max_steps=4)
    assert estimator.get_variable_names() == ["global_step", "linear/weights"]  # the model's: INPUT_POSITION aside
