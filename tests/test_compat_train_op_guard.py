"""Only TRAIN runs train_op: a model_fn that builds its train_op in every mode trains nothing in evaluate/predict.

tests/compat_cases.every_mode_train_op_model_fn builds `minimize()` (tf.compat.v1 GradientDescent or
Adam) or a hand-written update (w -= 0.5 * grad, global_step += 1) in TRAIN and EVAL alike; TF1 sessions
ran train_op only in TRAIN. The run trains 3 steps, evaluates (3 batches in one loop), predicts,
evaluates again and trains on to 6: every number must equal tf.estimator 2.15's
(tests/reference/compat_215.json) and the two evaluations of step 3 must be identical.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from tests import compat_cases as cases
from tests.compat_ours import OURS, REFERENCE, RTOL, assert_same_checkpoint

UPDATES = ["gradient_descent", "adam", "handwritten"]


@pytest.fixture(scope="module", params=UPDATES)
def every_mode_run(request, tmp_path_factory):
    update = request.param
    ours = cases.run_every_mode_train_op(OURS, str(tmp_path_factory.mktemp(update)), update)
    return ours, REFERENCE["every_mode_train_op"][update]


def test_evaluate_reports_the_checkpoints_loss_and_step_as_2_15(every_mode_run):
    ours, reference = every_mode_run
    for got, expected in zip(ours["evaluations"], reference["evaluations"], strict=True):
        assert got["global_step"] == expected["global_step"]
        assert got["loss"] == pytest.approx(expected["loss"], rel=RTOL)


def test_evaluating_twice_gives_identical_results(every_mode_run):
    ours, _ = every_mode_run
    assert ours["evaluations"][0] == ours["evaluations"][1]


def test_predict_uses_the_checkpoints_weights_as_2_15(every_mode_run):
    ours, reference = every_mode_run
    np.testing.assert_allclose(ours["logits_at_3"], reference["logits_at_3"], rtol=RTOL, atol=1e-6)


def test_evaluate_and_predict_leave_the_checkpoint_and_later_training_as_2_15(every_mode_run):
    ours, reference = every_mode_run
    assert_same_checkpoint(ours["checkpoint_at_3"], reference["checkpoint_at_3"])
    assert_same_checkpoint(ours["checkpoint_at_6"], reference["checkpoint_at_6"])


def test_optimizer_state_is_not_required_to_evaluate(tmp_path):
    # Trained with GradientDescent (no slots); evaluated and predicted by a model_fn that builds Adam in EVAL:
    # Adam's slots must be neither created nor looked for in the checkpoint.
    x, y = cases.classification_data(cases.GUARD_TRAIN_ROWS)
    ex, ey = cases.classification_data(cases.GUARD_EVAL_ROWS, seed=1)
    trainer = cases.tpu_estimator(OURS, cases.every_mode_train_op_model_fn(OURS, "gradient_descent"), str(tmp_path))
    trainer.train(cases.repeated_input_fn(x, y), max_steps=3)
    evaluator = cases.tpu_estimator(OURS, cases.every_mode_train_op_model_fn(OURS, "adam"), str(tmp_path))
    result = evaluator.evaluate(cases.one_pass_input_fn(ex, ey))
    expected = REFERENCE["every_mode_train_op"]["gradient_descent"]
    assert result["loss"] == pytest.approx(expected["evaluations"][0]["loss"], rel=RTOL)
    logits = [p["logits"] for p in evaluator.predict(cases.one_pass_input_fn(ex))]
    np.testing.assert_allclose(logits, expected["logits_at_3"], rtol=RTOL, atol=1e-6)
    assert not any("Adam" in name for name in evaluator.get_variable_names())


def test_every_mode_minimize_on_eight_replicas_evaluates_as_2_15(tmp_path, eight_replicas):
    ours = cases.run_every_mode_train_op(OURS, str(tmp_path), "adam", train_distribute=eight_replicas)
    reference = REFERENCE["every_mode_train_op"]["adam"]
    for got, expected in zip(ours["evaluations"], reference["evaluations"], strict=True):
        assert got["loss"] == pytest.approx(expected["loss"], rel=RTOL)
    assert_same_checkpoint(ours["checkpoint_at_6"], reference["checkpoint_at_6"])


# -- Keras 3 optimizers (no 2.15 counterpart: compared with the checkpoint's exact loss) --------------------
def _keras_every_mode_model_fn(features, labels, mode, params):
    model = keras.Sequential([keras.layers.Dense(cases.CLASSES, kernel_initializer=keras.initializers.Constant(0.1),
                                                 bias_initializer="zeros")])
    logits = model(features)
    if mode == ModeKeys.PREDICT:
        return TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    variables = model.trainable_variables
    if params["cross_shard"]:
        train_op = CrossShardOptimizer(keras.optimizers.Adam(0.05)).minimize(loss, var_list=variables)
    else:  # Keras 3 optimizers have no minimize()
        grads = tf.gradients(loss, variables)
        train_op = keras.optimizers.Adam(0.05).apply_gradients(zip(grads, variables, strict=True))
    return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("cross_shard", [True, False], ids=["cross_shard", "bare"])
def test_keras_optimizer_minimized_in_eval_changes_nothing(tmp_path, cross_shard):
    x, y = cases.classification_data(cases.GUARD_TRAIN_ROWS)
    ex, ey = cases.classification_data(cases.GUARD_EVAL_ROWS, seed=1)
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(iterations_per_loop=3))
    estimator = TPUEstimator(_keras_every_mode_model_fn, config=config, use_tpu=False,
                             params={"cross_shard": cross_shard}, train_batch_size=16, eval_batch_size=16)
    estimator.train(cases.repeated_input_fn(x, y), max_steps=3)
    before = {name: estimator.get_variable_value(name) for name in estimator.get_variable_names()}
    first = estimator.evaluate(cases.one_pass_input_fn(ex, ey))
    second = estimator.evaluate(cases.one_pass_input_fn(ex, ey))
    kernel, bias = before["sequential/dense/kernel"], before["sequential/dense/bias"]
    logits = ex @ kernel + bias
    logits -= logits.max(1, keepdims=True)
    exact = float(-(logits - np.log(np.exp(logits).sum(1, keepdims=True)))[np.arange(len(ey)), ey].mean())
    assert first == second
    assert first["loss"] == pytest.approx(exact, rel=RTOL)
    estimator.train(cases.repeated_input_fn(x, y), max_steps=4)
    assert estimator.get_variable_value("sequential/dense/kernel/Adam").shape == kernel.shape
