"""Early stopping (tf.estimator.experimental's hooks) reads evaluate()'s event files, as 2.15 did."""

import glob
import os

import pytest
import tensorflow as tf

from estimators import EvalSpec, RunConfig, TPUConfig, TPUEstimator, TrainSpec, train_and_evaluate
from estimators.experimental import (
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from tests import engine_models as m


def _estimator(model_dir, lr=0.5, iterations=2, save_every=2):
    config = RunConfig(model_dir=str(model_dir), save_checkpoints_steps=save_every, tpu_config=TPUConfig(iterations))
    return TPUEstimator(m.linear_model_fn, config=config, params={"lr": lr}, use_tpu=False, train_batch_size=16,
                        eval_batch_size=16)


def _eval_events(model_dir, subdir="eval"):
    """[(step, {tag: simple_value}, [string tensor tags])] of every event with a summary, in file order."""
    found = []
    for path in sorted(glob.glob(os.path.join(str(model_dir), subdir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            if event.summary.value:
                simple = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")}
                strings = {v.tag: tf.make_ndarray(v.tensor).item().decode() for v in event.summary.value
                           if v.HasField("tensor") and v.tensor.dtype == tf.string.as_datatype_enum}
                found.append((event.step, simple, strings))
    return found


def test_evaluate_writes_every_metric_in_one_event_at_the_global_step_then_the_checkpoint_path(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path).train(m.train_input_fn(x, y), max_steps=3)
    result = estimator.evaluate(m.eval_input_fn(x, y))
    events = _eval_events(tmp_path)
    assert [step for step, _, _ in events] == [3, 3]
    assert events[0][1] == pytest.approx({"loss": result["loss"], "accuracy": result["accuracy"],
                                          "examples": 32.0})
    assert events[1][2] == {"checkpoint_path": estimator.latest_checkpoint()}


def test_a_named_evaluation_writes_to_eval_dir_of_its_name(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path).train(m.train_input_fn(x, y), max_steps=2)
    estimator.evaluate(m.eval_input_fn(x, y), name="train_data")
    assert estimator.eval_dir("train_data") == os.path.join(str(tmp_path), "eval_train_data")
    assert [step for step, _, _ in _eval_events(tmp_path, "eval_train_data")] == [2, 2]
    assert read_eval_metrics(estimator.eval_dir("train_data"))[2]["examples"] == 32.0


def test_train_and_evaluate_stops_when_the_loss_stops_decreasing(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, lr=0.0)  # the loss never moves: no evaluation improves on the first
    hook = stop_if_no_decrease_hook(estimator, "loss", 4, run_every_secs=None, run_every_steps=1)
    result, _ = train_and_evaluate(estimator, TrainSpec(m.train_input_fn(x, y), max_steps=100, hooks=[hook]),
                                   EvalSpec(m.eval_input_fn(x, y), steps=None, throttle_secs=0))
    # Evaluations at 2, 4, 6 are on record when the boundary at step 8 checks: 6 - 2 >= 4.
    assert result["global_step"] == 8
    assert list(read_eval_metrics(estimator.eval_dir())) == [2, 4, 6, 8]


def test_training_that_keeps_improving_is_not_stopped(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, lr=0.5)
    hook = stop_if_no_decrease_hook(estimator, "loss", 4, run_every_secs=0)
    result, _ = train_and_evaluate(estimator, TrainSpec(m.train_input_fn(x, y), max_steps=10, hooks=[hook]),
                                   EvalSpec(m.eval_input_fn(x, y), steps=None, throttle_secs=0))
    assert result["global_step"] == 10


@pytest.mark.parametrize(("make", "threshold", "stops"), [
    (stop_if_higher_hook, 0.0, True), (stop_if_higher_hook, 1.0, False),
    (stop_if_lower_hook, 100.0, True), (stop_if_lower_hook, 0.0, False),
])
def test_threshold_hooks_stop_once_an_evaluation_crossed_the_threshold(tmp_path, make, threshold, stops):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path)
    metric = "accuracy" if make is stop_if_higher_hook else "loss"
    hook = make(estimator, metric, threshold, run_every_secs=None, run_every_steps=2)
    result, _ = train_and_evaluate(estimator, TrainSpec(m.train_input_fn(x, y), max_steps=8, hooks=[hook]),
                                   EvalSpec(m.eval_input_fn(x, y), steps=None, throttle_secs=0))
    assert result["global_step"] == (4 if stops else 8)  # the first evaluation (step 2) is seen at step 4


def test_min_steps_ignores_earlier_evaluations(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, lr=0.0)
    hook = stop_if_no_increase_hook(estimator, "accuracy", 2, min_steps=6, run_every_secs=0)
    result, _ = train_and_evaluate(estimator, TrainSpec(m.train_input_fn(x, y), max_steps=100, hooks=[hook]),
                                   EvalSpec(m.eval_input_fn(x, y), steps=None, throttle_secs=0))
    assert result["global_step"] == 10  # evaluations at 6 and 8 are on record at step 10: 8 - 6 >= 2


def test_an_unknown_metric_name_lists_the_recorded_ones(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path)
    hook = stop_if_no_decrease_hook(estimator, "acuracy", 4, run_every_secs=0)
    with pytest.raises(ValueError, match=r"'acuracy'.*\['accuracy', 'examples', 'loss'\]"):
        train_and_evaluate(estimator, TrainSpec(m.train_input_fn(x, y), max_steps=6, hooks=[hook]),
                           EvalSpec(m.eval_input_fn(x, y), steps=None, throttle_secs=0))


def test_only_one_schedule_may_be_set(tmp_path):
    with pytest.raises(ValueError, match="only one of run_every_secs and run_every_steps"):
        stop_if_no_decrease_hook(_estimator(tmp_path), "loss", 4, run_every_secs=60, run_every_steps=10)
