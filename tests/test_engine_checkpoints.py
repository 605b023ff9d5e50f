"""Global step, checkpoints and resume: a new process picks up exactly where the last stopped."""

import os
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from estimators import RunConfig, TPUConfig, TPUEstimator
from tests import engine_models as m
from tests import launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _estimator(model_dir, **config):
    settings = dict(model_dir=str(model_dir), save_checkpoints_steps=5, tpu_config=TPUConfig(iterations_per_loop=5))
    settings.update(config)
    return TPUEstimator(m.linear_model_fn, config=RunConfig(**settings), use_tpu=False, params={"adam": True},
                        train_batch_size=16, eval_batch_size=16)


def _four_batches():
    """64 examples = 4 distinct batches of 16, cycled: any multiple of 4 steps ends a cycle."""
    return m.train_input_fn(*m.dataset(64))


def _train_in_new_process(model_dir, max_steps):
    script = textwrap.dedent(f"""
        from estimators import RunConfig, TPUConfig, TPUEstimator
        from tests import engine_models as m
        from tests.test_engine_checkpoints import _estimator, _four_batches
        _estimator({str(model_dir)!r}).train(_four_batches(), max_steps={max_steps})
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    launcher.run([sys.executable, "-c", script], check=True, cwd=ROOT, env=env, timeout=300)


def test_resuming_in_a_new_process_equals_uninterrupted_training(tmp_path):
    _train_in_new_process(tmp_path / "resumed", 20)
    _train_in_new_process(tmp_path / "resumed", 40)
    straight = _estimator(tmp_path / "straight").train(_four_batches(), max_steps=40)
    resumed = _estimator(tmp_path / "resumed")
    assert resumed.get_variable_value("global_step") == 40
    assert straight.get_variable_names() == resumed.get_variable_names()
    for name in straight.get_variable_names():
        np.testing.assert_allclose(resumed.get_variable_value(name), straight.get_variable_value(name), rtol=1e-6)


def test_steps_adds_to_the_global_step_and_max_steps_stops_there(tmp_path):
    estimator = _estimator(tmp_path)
    estimator.train(_four_batches(), steps=7)
    assert estimator.get_variable_value("global_step") == 7
    estimator.train(_four_batches(), steps=3)
    assert estimator.get_variable_value("global_step") == 10
    estimator.train(_four_batches(), max_steps=12)
    assert estimator.get_variable_value("global_step") == 12


def test_max_steps_already_reached_is_a_no_op(tmp_path):
    estimator = _estimator(tmp_path).train(_four_batches(), max_steps=6)
    before = estimator.latest_checkpoint()
    estimator.train(_four_batches(), max_steps=3)
    assert estimator.latest_checkpoint() == before
    assert estimator.get_variable_value("global_step") == 6


def test_checkpoints_every_save_checkpoints_steps_and_keeps_the_newest(tmp_path):
    estimator = _estimator(tmp_path, keep_checkpoint_max=2)
    estimator.train(_four_batches(), max_steps=17)
    kept = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert kept == ["model.ckpt-15.index", "model.ckpt-17.index"]
    assert estimator.latest_checkpoint().endswith("model.ckpt-17")


def test_variable_names_are_the_tf1_names_tf_estimator_wrote(tmp_path):
    estimator = _estimator(tmp_path).train(_four_batches(), max_steps=1)
    assert estimator.get_variable_names() == [
        "adam/iteration", "global_step",
        "sequential/dense/bias", "sequential/dense/bias/Adam", "sequential/dense/bias/Adam_1",
        "sequential/dense/kernel", "sequential/dense/kernel/Adam", "sequential/dense/kernel/Adam_1",
    ]
    assert estimator.get_variable_value("sequential/dense/kernel").shape == (m.FEATURES, m.CLASSES)


def test_the_engines_own_checkpoint_entry_is_not_listed_as_a_model_variable(tmp_path):
    estimator = _estimator(tmp_path).train(_four_batches(), max_steps=1)
    stored = dict(tf.train.list_variables(estimator.latest_checkpoint()))
    assert "estimators/input_position" in stored  # where a resumed train() continues in the input
    assert "estimators/input_position" not in estimator.get_variable_names()  # as 2.15 listed: the model's only


def test_unknown_variable_name_is_a_clear_error(tmp_path):
    estimator = _estimator(tmp_path).train(_four_batches(), max_steps=1)
    with pytest.raises(ValueError, match=r"No variable 'dense/kernel'.*get_variable_names"):
        estimator.get_variable_value("dense/kernel")


def test_warm_start_copies_weights_but_not_the_global_step(tmp_path):
    source = _estimator(tmp_path / "source").train(_four_batches(), max_steps=8)
    config = RunConfig(model_dir=str(tmp_path / "warm"), tpu_config=TPUConfig(iterations_per_loop=1))
    warm = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, params={"lr": 0.0}, train_batch_size=16,
                        warm_start_from=str(tmp_path / "source"))
    warm.train(_four_batches(), max_steps=1)
    assert warm.get_variable_value("global_step") == 1
    np.testing.assert_allclose(warm.get_variable_value("sequential/dense/kernel"),
                               source.get_variable_value("sequential/dense/kernel"))


def test_evaluate_restores_a_given_checkpoint_path(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path).train(_four_batches(), max_steps=10)
    early = estimator.evaluate(m.eval_input_fn(x, y), checkpoint_path=str(tmp_path / "model.ckpt-5"))
    late = estimator.evaluate(m.eval_input_fn(x, y))
    assert (early["global_step"], late["global_step"]) == (5, 10)
    assert early["loss"] != late["loss"]


def test_train_calls_in_one_process_continue_the_same_data_stream(tmp_path):
    x, y = m.dataset(80)  # 5 distinct batches: 7 + 6 steps only match 13 straight steps if the stream goes on
    input_fn = m.train_input_fn(x, y)
    split = _estimator(tmp_path / "split")
    split.train(input_fn, max_steps=7)
    split.train(input_fn, max_steps=13)
    straight = _estimator(tmp_path / "straight").train(m.train_input_fn(x, y), max_steps=13)
    np.testing.assert_allclose(split.get_variable_value("sequential/dense/kernel"),
                               straight.get_variable_value("sequential/dense/kernel"), rtol=1e-6)


def test_unreadable_checkpoint_state_stops_training_instead_of_starting_over(tmp_path):
    estimator = _estimator(tmp_path).train(_four_batches(), max_steps=5)
    for name in os.listdir(tmp_path):
        if name.startswith(("model.ckpt-5.", "model.ckpt-0.")):  # every checkpoint listed, none complete
            os.remove(tmp_path / name)
    with pytest.raises(RuntimeError, match=r"none is complete.*ckpt-5 \(no .index file\).*Refusing to start over"):
        estimator.train(_four_batches(), max_steps=10)


@pytest.mark.parametrize("iterations", [1, 3])
def test_training_stops_cleanly_where_finite_input_ends(tmp_path, iterations):
    x, y = m.dataset(80)

    def five_batches(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(params["batch_size"], drop_remainder=True)

    estimator = _estimator(tmp_path, tpu_config=TPUConfig(iterations_per_loop=iterations))
    estimator.train(five_batches, max_steps=100)
    assert estimator.get_variable_value("global_step") == 5
    assert estimator.latest_checkpoint().endswith("model.ckpt-5")


def test_save_checkpoints_secs_saves_between_loops_once_the_time_has_passed(tmp_path):
    estimator = _estimator(tmp_path, save_checkpoints_steps=None, save_checkpoints_secs=1e-6,
                           tpu_config=TPUConfig(iterations_per_loop=2))
    estimator.train(_four_batches(), max_steps=6)
    kept = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert kept == ["model.ckpt-2.index", "model.ckpt-4.index", "model.ckpt-6.index"]


def test_save_input_position_false_keeps_the_train_stream_position_out_of_checkpoints(tmp_path):
    estimator = _estimator(tmp_path, save_input_position=False).train(_four_batches(), max_steps=1)
    assert "estimators/input_position" not in estimator.get_variable_names()
