"""The global step model_fn sees: the step being run, every step, whatever iterations_per_loop is.

Each train step of tests/compat_cases.schedule_model_fn records the learning rate it used at index
global_step and counts the global step it saw, so the rate of every step 0..9 is observable. It is
compared with the schedule's closed form and with what tf.estimator 2.15's TPUEstimator(use_tpu=False)
recorded for the same model_fn (tests/reference/compat_215.json; 2.15 ran one step per session.run).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from tests import compat_cases as cases
from tests.compat_ours import OURS, REFERENCE

STEPS = cases.SCHEDULE_STEPS


def _check_against_formula_and_2_15(ours: dict, schedule: str, reference_key: str) -> None:
    formula = [cases.schedule_formula(schedule, step) for step in range(STEPS)]
    np.testing.assert_allclose(ours["rates"], formula, rtol=1e-5)
    assert ours["seen"] == [1.0] * STEPS  # every step 0..9 seen exactly once
    assert ours["global_step"] == STEPS
    np.testing.assert_allclose(ours["w"], 5.0 - sum(formula), rtol=1e-5)  # loss = w: w moved by each rate
    reference = REFERENCE["schedules"][reference_key]
    np.testing.assert_allclose(ours["rates"], reference["rates"], rtol=1e-5)
    assert ours["seen"] == reference["seen"]
    assert ours["global_step"] == reference["global_step"]
    np.testing.assert_allclose(ours["w"], reference["w"], rtol=1e-5)


@pytest.mark.parametrize("iterations", [1, 7])
@pytest.mark.parametrize("schedule", list(cases.SCHEDULES))
def test_rate_used_at_each_step_is_the_schedule_at_that_step(tmp_path, schedule, iterations):
    ours = cases.run_schedule(OURS, str(tmp_path), schedule, "minimize", iterations)
    _check_against_formula_and_2_15(ours, schedule, f"{schedule}/minimize/{iterations}")


@pytest.mark.parametrize("iterations", [1, 7])
@pytest.mark.parametrize("step_update", ["assign_add", "get_or_create"])
def test_train_op_that_increments_the_global_step_itself_never_double_counts(tmp_path, step_update, iterations):
    ours = cases.run_schedule(OURS, str(tmp_path), "exponential_decay", step_update, iterations)
    _check_against_formula_and_2_15(ours, "exponential_decay", f"exponential_decay/{step_update}/{iterations}")


@pytest.mark.parametrize("iterations", [1, 7])
def test_train_op_that_leaves_the_global_step_alone_still_advances_it_once_per_step(tmp_path, iterations):
    # 2.15 could not run this model_fn (its global step would never move); ours must equal the
    # minimize(global_step=...) run.
    ours = cases.run_schedule(OURS, str(tmp_path), "exponential_decay", "untouched", iterations)
    _check_against_formula_and_2_15(ours, "exponential_decay", f"exponential_decay/minimize/{iterations}")


def test_predict_and_evaluate_see_the_checkpoints_global_step_in_every_batch(tmp_path):
    ours = cases.run_global_step_probe(OURS, str(tmp_path))
    assert ours == REFERENCE["global_step_probe"]
    assert ours["predicted_global_steps"] == [3] * 40


# -- a Keras 3 optimizer's own schedule, evaluated at its own step counter ---------------------------------
def _keras_schedule_model_fn(features, labels, mode, params):
    """loss = w (ones in, Dense(1) without bias from 5.0), Keras SGD on an ExponentialDecay schedule.

    Records the rate the optimizer reports before each update at index global_step.
    """
    layer = keras.layers.Dense(1, use_bias=False, kernel_initializer=keras.initializers.Constant(5.0), name="w")
    loss = tf.reduce_mean(layer(features))
    rates = tf.compat.v1.get_variable("rates", [STEPS], initializer=tf.compat.v1.zeros_initializer(),
                                      trainable=False)
    if mode != "train":
        return TPUEstimatorSpec(mode, loss=loss)
    optimizer = CrossShardOptimizer(keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5)))
    step = tf.compat.v1.train.get_global_step()
    with tf.control_dependencies([tf.compat.v1.scatter_update(rates, step, optimizer.learning_rate)]):
        train_op = optimizer.minimize(loss)
    return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("iterations", [1, 7])
def test_keras_optimizer_schedule_follows_the_global_step_across_train_calls_and_estimators(tmp_path, iterations):
    def estimator():
        config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(iterations_per_loop=iterations))
        return TPUEstimator(_keras_schedule_model_fn, config=config, use_tpu=False, train_batch_size=4)

    ones = np.ones([64, 1], np.float32)
    estimator().train(cases.repeated_input_fn(ones, np.zeros([64], np.int32)), max_steps=4)
    resumed = estimator().train(cases.repeated_input_fn(ones, np.zeros([64], np.int32)), max_steps=STEPS)
    formula = [cases.schedule_formula("exponential_decay", step) for step in range(STEPS)]
    np.testing.assert_allclose(resumed.get_variable_value("rates"), formula, rtol=1e-5)
    np.testing.assert_allclose(resumed.get_variable_value("w/kernel"), [[5.0 - sum(formula)]], rtol=1e-5)
    assert resumed.get_variable_value("global_step") == STEPS
