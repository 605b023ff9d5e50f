"""train_and_evaluate's executor: which procedure each TF_CONFIG task runs, and when it evaluates (2.15's contract)."""

import json
from unittest import mock

import pytest
import tensorflow as tf

from estimators import Estimator, EstimatorSpec, EvalSpec, RunConfig, TrainSpec
from estimators.train_eval import training

CLUSTER = {"chief": ["host0:2222"], "ps": ["host1:2222"], "worker": ["host3:2222", "host4:2222"]}


def _config(task_type, index=0):
    with mock.patch.dict("os.environ", {"TF_CONFIG": json.dumps({"cluster": CLUSTER,
                                                                  "task": {"type": task_type, "index": index}})}):
        return RunConfig()


def _estimator(config, **kwargs):
    est = mock.Mock(spec=Estimator, **kwargs)
    est.config = config
    return est


def _input_fn():
    return {"x": tf.constant([[1.0]])}, tf.constant([[1.0]])


def test_a_chief_task_starts_its_server_and_trains_without_evaluating():
    est = _estimator(_config("chief"))
    with mock.patch.object(training.server_lib, "Server") as server:
        training._TrainingExecutor(est, TrainSpec(_input_fn, max_steps=3), EvalSpec(_input_fn)).run()
    server.assert_called_once()
    assert server.return_value.start.called
    est.train.assert_called_once()
    est.evaluate.assert_not_called()


def test_a_task_whose_strategy_already_serves_the_cluster_starts_no_second_server():
    est = _estimator(_config("chief"))
    with mock.patch.object(training.server_lib, "Server") as server, \
            mock.patch.object(training, "_runs_own_server", return_value=True):
        training._TrainingExecutor(est, TrainSpec(_input_fn, max_steps=3), EvalSpec(_input_fn)).run_chief()
    server.assert_not_called()
    est.train.assert_called_once()


def test_a_worker_waits_five_seconds_per_index_before_training():
    est = _estimator(_config("worker", index=1))
    with mock.patch.object(training.server_lib, "Server"), mock.patch.object(training.time, "sleep") as sleep:
        training._TrainingExecutor(est, TrainSpec(_input_fn), EvalSpec(_input_fn)).run()
    sleep.assert_called_once_with(10)


def test_a_task_type_without_a_procedure_is_refused_naming_the_supported_ones():
    est = _estimator(mock.Mock(cluster_spec=tf.train.ClusterSpec({"alloc": ["h:1"]}), task_type="alloc"))
    with pytest.raises(ValueError, match="Task type alloc is not supported. Supported task types are .*chief"):
        training._TrainingExecutor(est, TrainSpec(_input_fn), EvalSpec(_input_fn)).run()


def test_the_save_of_the_starting_state_is_not_evaluated_but_later_saves_are():
    est = _estimator(RunConfig(), model_dir="/nonexistent/path")
    est.latest_checkpoint.side_effect = ["ckpt-10", "ckpt-20"]
    est.evaluate.side_effect = [{"global_step": 10}, {"global_step": 20}]
    evaluator = training._TrainingExecutor._Evaluator(est, EvalSpec(_input_fn, throttle_secs=0), 20)
    listener = training._NewCheckpointListenerForEvaluate(evaluator, 0, training._ContinuousEvalListener())
    listener.begin()
    listener.after_save(0, "model.ckpt-0")  # the graph path saves the state it starts from
    listener.after_save(10, "model.ckpt-10")
    listener.after_save(session=None, global_step_value=20)  # tf.compat.v1's keyword call
    assert est.evaluate.call_count == 2 and listener.eval_result.metrics == {"global_step": 20}


def test_a_continuous_eval_listener_returning_false_after_an_evaluation_stops_training():
    class StopAfterFirst(training._ContinuousEvalListener):
        def after_eval(self, eval_result):
            return False

    est = _estimator(RunConfig(), model_dir="/nonexistent/path")
    est.latest_checkpoint.return_value = "ckpt-5"
    est.evaluate.return_value = {"global_step": 5}
    evaluator = training._TrainingExecutor._Evaluator(est, EvalSpec(_input_fn), None)
    listener = training._NewCheckpointListenerForEvaluate(evaluator, 0, StopAfterFirst())
    listener.begin()
    assert listener.after_save(5, "ckpt-5") is True


def test_run_local_refuses_a_config_that_saves_no_checkpoints():
    est = _estimator(RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None))
    with pytest.raises(ValueError, match="There should be a CheckpointSaverHook.*Set one of them"):
        training._TrainingExecutor(est, TrainSpec(_input_fn), EvalSpec(_input_fn)).run_local()
    est.train.assert_not_called()


def test_an_evaluator_stops_once_a_checkpoint_reaches_max_steps_and_returns_its_metrics():
    est = _estimator(_config("evaluator"))
    est.latest_checkpoint.side_effect = ["ckpt-5", "ckpt-5", "ckpt-10"]
    est.evaluate.side_effect = [{"global_step": 5}, {"global_step": 10}]
    metrics, _ = training._TrainingExecutor(est, TrainSpec(_input_fn, max_steps=10),
                                            EvalSpec(_input_fn, start_delay_secs=0, throttle_secs=0)).run()
    assert metrics == {"global_step": 10} and est.evaluate.call_count == 2


def test_train_spec_refuses_a_hook_of_another_kind_with_a_type_error():
    with pytest.raises(TypeError, match="All hooks must be `SessionRunHook` instances .* or estimators.Hook"):
        TrainSpec(_input_fn, hooks=[object()])


def test_run_config_replace_keeps_the_cluster_of_the_original():
    config = _config("worker", index=1)
    assert config.replace(experimental_max_worker_delay_secs=0).task_id == 1


def test_train_refuses_a_hook_of_another_kind_with_2_15s_type_error():
    from estimators.training.hooks import Hook, checked_hooks

    with pytest.raises(TypeError, match="train\\(\\) hooks: each hook must be a SessionRunHook .* got str"):
        checked_hooks(["not-a-hook"], "train() hooks", Hook)


def test_an_evaluator_whose_checkpoint_is_rotated_away_evaluates_the_newest_instead(tmp_path):
    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_global_step()
        return EstimatorSpec(mode, loss=tf.constant(0.0), train_op=tf.compat.v1.assign_add(step, 1))

    est = Estimator(model_fn, config=RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=2))
    est.train(_input_fn, max_steps=4)  # model.ckpt-0, -2, -4
    rotated = est.latest_checkpoint()
    for name in tf.io.gfile.glob(rotated + ".*"):
        tf.io.gfile.remove(name)  # as a trainer's keep_checkpoint_max removes it, after the evaluator chose it
    evaluator = training._TrainingExecutor._Evaluator(est, EvalSpec(_input_fn, steps=1), None)
    with mock.patch.object(est, "latest_checkpoint", return_value=rotated):
        result, _ = evaluator.evaluate_and_export()
    assert result.checkpoint_path.endswith("model.ckpt-2") and result.metrics["global_step"] == 2
