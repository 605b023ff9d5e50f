"""TF_CONFIG clusters with a 'master' job, and train_and_evaluate's executor hand-off, as tf.estimator 2.15 had them.

Each test checks one behaviour; the docstring says what 2.15 did (values seen running tensorflow-estimator 2.15.0).
"""

import glob
import json
import os
from unittest import mock

import pytest
import tensorflow as tf

from estimators import Estimator, EstimatorSpec, EvalSpec, RunConfig, TrainSpec
from estimators.train_eval import training

_MASTER_AND_WORKERS = {"ps": ["localhost:1234"], "worker": ["localhost:1235", "localhost:1237"],
                       "master": ["localhost:1236"]}


def _model_fn(features, labels, mode):
    del features, labels
    return EstimatorSpec(mode, loss=tf.constant(1.0),
                         train_op=tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1))


def _input_fn():
    return {"x": tf.constant([[1], [1]])}, tf.constant([[1], [1]])


def _estimator(tf_config, tmp_path, **config):
    with mock.patch.dict("os.environ", {"TF_CONFIG": json.dumps(tf_config)}):
        return Estimator(_model_fn, config=RunConfig(model_dir=str(tmp_path), **config))


def _loss_steps(model_dir):
    steps = []
    for path in glob.glob(os.path.join(str(model_dir), "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            steps += [event.step for value in event.summary.value if value.tag == "loss"]
    return sorted(steps)


def test_an_estimator_is_made_on_a_worker_of_a_master_cluster_with_several_workers(tmp_path):
    """2.15: Estimator(config=RunConfig()) on worker 1 of {ps: 1, worker: 2, master: 1} was made (no strategy is
    created), its config worker 1, not the chief, of 3 worker replicas and 1 ps. TensorFlow's "Disallowed task type"
    error (MultiWorkerMirroredStrategy refuses a 'master' job) must not escape the constructor."""
    est = _estimator({"cluster": _MASTER_AND_WORKERS, "task": {"type": "worker", "index": 1}}, tmp_path)
    config = est.config
    assert (config.task_type, config.task_id, config.is_chief, config.num_worker_replicas,
            config.num_ps_replicas) == ("worker", 1, False, 3, 1)


@pytest.mark.parametrize(("task_type", "index"), [("master", 0), ("worker", 0), ("worker", 1)])
def test_training_a_master_cluster_with_workers_is_refused_naming_the_way_out(tmp_path, task_type, index):
    """2.15 trained {ps, worker, master} between-graph: TF1 sessions on every task sharing the variables on the ps
    tasks (MonitoredTrainingSession against the task's grpc:// master). The engine cannot: each task would train its
    own copy and two of them would write model_dir. So train() says so and names the 'chief' job instead."""
    est = _estimator({"cluster": _MASTER_AND_WORKERS, "task": {"type": task_type, "index": index}}, tmp_path)
    with pytest.raises(ValueError, match="'master' job.*Name the 'master' job 'chief'"):
        est.train(_input_fn, steps=1)
    assert not glob.glob(os.path.join(str(tmp_path), "*"))  # nothing written


def test_a_single_replica_master_trains_and_writes_the_summaries_itself(tmp_path):
    """2.15, TF_CONFIG {master: [one task]} (no workers): the master, the chief, trained and wrote the summaries on
    RunConfig's schedule (MonitoredTrainingSession's save_summaries_steps): with save_summary_steps=2 and 3 steps,
    `loss` at steps 1 and 3, and the global step ended at 3."""
    est = _estimator({"cluster": {"master": ["localhost:1234"]}, "task": {"type": "master", "index": 0}}, tmp_path,
                     save_summary_steps=2, log_step_count_steps=200)
    assert est.config.is_chief
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3
    assert _loss_steps(tmp_path) == [1, 3]


def test_train_and_evaluate_hands_the_specs_to_an_executor_and_runs_it():
    """2.15's train_and_evaluate made _TrainingExecutor(estimator=, train_spec=, eval_spec=) and called its run()."""
    est = mock.Mock(spec=Estimator)
    train_spec, eval_spec = mock.Mock(spec=TrainSpec), mock.Mock(spec=EvalSpec)
    with mock.patch.object(training, "_TrainingExecutor") as executor:
        training.train_and_evaluate(est, train_spec, eval_spec)
    executor.assert_called_with(estimator=est, train_spec=train_spec, eval_spec=eval_spec)
    assert executor.return_value.run.called
