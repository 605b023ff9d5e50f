"""The graph-and-session path: which programs take it, and that it runs them as tf.estimator 2.15 did.

Numbers pinned to 2.15 live in tests/test_silent_cases_215.py; these tests pin the mechanics: the
choice of path, checkpoints published through the Checkpointer, hooks and listeners, signals, and
checkpoints that move between the two paths.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import tensorflow as tf

import estimators
from estimators.checkpoint.checkpointer import CheckpointSaveError
from estimators.training.preemption import TrainingInterrupted
from tests import launcher

X = (np.arange(32, dtype=np.float32).reshape(16, 2) % 7 - 3.0) / 3.0
Y = (X @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(4)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)


def linear_model_fn(features, labels, mode, params):
    """A TF1 linear regression; params may ask for a Scaffold, training hooks or evaluation/prediction hooks."""
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer([[0.1], [0.2]]))
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features, w) + b
    scaffold = tf.compat.v1.train.Scaffold() if params.get("scaffold") else None
    if mode == estimators.ModeKeys.PREDICT:
        return estimators.EstimatorSpec(mode, predictions={"y": predictions, "x": tf.convert_to_tensor(features)},
                                        scaffold=scaffold, prediction_hooks=params.get("prediction_hooks", ()))
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return estimators.EstimatorSpec(
        mode, loss=loss, train_op=train_op, scaffold=scaffold,
        eval_metric_ops={"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)},
        training_hooks=params.get("training_hooks", ()), evaluation_hooks=params.get("evaluation_hooks", ()))


def _estimator(tmp_path, execution=None, **params):
    config = estimators.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=3, execution=execution)
    return estimators.Estimator(linear_model_fn, config=config, params=params)


class Counter(tf.compat.v1.train.SessionRunHook):
    def __init__(self):
        self.runs, self.sessions, self.ended = 0, 0, 0

    def after_create_session(self, session, coord):
        self.sessions += 1

    def after_run(self, run_context, run_values):
        self.runs += 1

    def end(self, session):
        self.ended += 1


def test_a_spec_with_a_scaffold_runs_on_the_graph_path(tmp_path):
    estimator = _estimator(tmp_path, scaffold=True).train(train_input_fn, steps=4)
    assert estimator._execution == "graph"
    assert estimator.get_variable_names() == ["b", "global_step", "w"]
    assert estimator.evaluate(eval_input_fn)["global_step"] == 4


def test_a_plain_tf1_model_fn_stays_on_the_tf2_path(tmp_path):
    estimator = _estimator(tmp_path).train(train_input_fn, steps=2)
    assert estimator._execution is None


def test_session_hooks_given_to_train_choose_the_graph_path_and_run_around_every_step(tmp_path):
    counter = Counter()
    _estimator(tmp_path).train(train_input_fn, steps=5, hooks=[counter])
    assert (counter.sessions, counter.runs, counter.ended) == (1, 5, 1)


def test_the_spec_evaluation_and_prediction_hooks_run(tmp_path):
    evaluation, prediction = Counter(), Counter()
    estimator = _estimator(tmp_path, evaluation_hooks=[evaluation], prediction_hooks=[prediction])
    estimator.evaluate(eval_input_fn)
    list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(X).batch(8)))
    assert (evaluation.runs, prediction.runs) == (4, 2)


def test_runconfig_tf2_with_a_scaffold_is_one_error_naming_the_choice(tmp_path):
    with pytest.raises(ValueError, match=r"execution='tf2'.*Scaffold.*execution='graph'"):
        _estimator(tmp_path, execution="tf2", scaffold=True).train(train_input_fn, steps=1)


def test_runconfig_execution_takes_only_known_paths():
    with pytest.raises(ValueError, match="execution must be None"):
        estimators.RunConfig(execution="session")


def test_checkpoints_are_published_through_the_state_file_on_the_save_schedule(tmp_path):
    _estimator(tmp_path, scaffold=True).train(train_input_fn, steps=7)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    steps = [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]
    assert steps == [0, 3, 6, 7]  # at the session's start, every 3 steps, and at the end (2.15's schedule)


def test_a_failed_save_leaves_the_previous_checkpoint_latest(tmp_path, monkeypatch):
    estimator = _estimator(tmp_path, scaffold=True).train(train_input_fn, steps=3)
    original = tf.compat.v1.train.Saver.save

    def full_disk(self, sess, save_path, global_step=None, **kwargs):
        if global_step == 6:
            raise tf.errors.ResourceExhaustedError(None, None, "No space left on device")
        return original(self, sess, save_path, global_step=global_step, **kwargs)

    monkeypatch.setattr(tf.compat.v1.train.Saver, "save", full_disk)
    with pytest.raises(CheckpointSaveError, match="step 6.*latest checkpoint is still .*model.ckpt-3"):
        estimator.train(train_input_fn, steps=3)
    assert estimator.latest_checkpoint().endswith("model.ckpt-3")


def test_tf1_and_engine_saving_listeners_hear_every_save(tmp_path):
    heard = []

    class V1Listener(tf.compat.v1.train.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            heard.append(("v1", global_step_value))

    class Listener(estimators.SavingListener):
        def after_save(self, step, path):
            heard.append(("tf2", step, path.rsplit("/", 1)[1]))

    _estimator(tmp_path, scaffold=True).train(train_input_fn, steps=3, saving_listeners=[V1Listener(), Listener()])
    assert heard == [("v1", 0), ("tf2", 0, "model.ckpt-0"), ("v1", 3), ("tf2", 3, "model.ckpt-3")]


def test_a_signal_stops_training_after_the_step_and_saves_it(tmp_path):
    estimator = _estimator(tmp_path, scaffold=True)

    class SignalAfterTwoSteps(tf.compat.v1.train.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 2:
                estimator._stop.request("SIGTERM")  # what the SIGTERM handler does

    with pytest.raises(TrainingInterrupted, match="SIGTERM at global step 2") as stopped:
        estimator.train(train_input_fn, steps=10, hooks=[SignalAfterTwoSteps()])
    assert stopped.value.checkpoint.endswith("model.ckpt-2")
    assert estimator.latest_checkpoint().endswith("model.ckpt-2")


def test_input_fn_is_called_once_per_call(tmp_path):
    calls = []

    def counted():
        calls.append(1)
        return train_input_fn()

    estimator = _estimator(tmp_path, execution="graph")
    estimator.train(counted, steps=2)
    estimator.evaluate(lambda: (calls.append(1), eval_input_fn())[1])
    assert len(calls) == 2


def test_input_fn_may_return_numpy_arrays_and_predict_labels_none(tmp_path):
    estimator = _estimator(tmp_path, execution="graph")
    estimator.train(lambda: (X, Y), steps=3)
    results = estimator.evaluate(lambda: (X, Y), steps=1)
    predicted = list(itertools.islice(estimator.predict(lambda: (X[:3], None)), 3))  # constants never end
    assert results["global_step"] == 3 and len(predicted) == 3
    np.testing.assert_allclose([p["x"] for p in predicted], X[:3])


def test_predict_without_single_examples_yields_whole_batches(tmp_path):
    estimator = _estimator(tmp_path, execution="graph")
    batches = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(X).batch(6),
                                     yield_single_examples=False))
    assert [b["y"].shape for b in batches] == [(6, 1), (6, 1), (4, 1)]


def test_a_graph_path_checkpoint_evaluates_the_same_on_the_tf2_path(tmp_path):
    graph = _estimator(tmp_path, execution="graph").train(train_input_fn, steps=5)
    on_graph = graph.evaluate(eval_input_fn)
    on_tf2 = _estimator(tmp_path, execution="tf2").evaluate(eval_input_fn)
    assert on_tf2["global_step"] == on_graph["global_step"] == 5
    np.testing.assert_allclose(on_tf2["loss"], on_graph["loss"], rtol=1e-5)
    np.testing.assert_allclose(on_tf2["mae"], on_graph["mae"], rtol=1e-5)


def test_a_tf2_path_checkpoint_resumes_on_the_graph_path(tmp_path):
    _estimator(tmp_path, execution="tf2").train(train_input_fn, steps=3)
    resumed = _estimator(tmp_path, execution="graph").train(train_input_fn, steps=2)
    assert resumed.evaluate(eval_input_fn)["global_step"] == 5


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
    return estimators.export.TensorServingInputReceiver(x, {"x": x})


def test_export_writes_a_tf1_saved_model_that_serves_what_predict_returns(tmp_path):
    estimator = _estimator(tmp_path / "run", scaffold=True).train(train_input_fn, steps=3)
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), serving_input_receiver_fn).decode()
    served = tf.saved_model.load(export_dir).signatures["serving_default"](x=tf.constant(X[:4]))
    predicted = [p["y"] for p in estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(X[:4]).batch(4))]
    np.testing.assert_allclose(served["y"].numpy(), np.stack(predicted), rtol=1e-6)
    assert [p.name for p in (tmp_path / "export").iterdir()] == [export_dir.rsplit("/", 1)[1]]  # no temp- left


_EAGER_DISABLED_PROGRAM = """
import json, sys
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
sys.path.insert(0, {tests!r})
import estimators
from test_graph_path import X, eval_input_fn, linear_model_fn, serving_input_receiver_fn, train_input_fn
estimator = estimators.Estimator(linear_model_fn, model_dir={model_dir!r})
estimator.train(train_input_fn, steps=4)
results = estimator.evaluate(eval_input_fn)
predicted = [p["y"].tolist() for p in estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(X[:2]).batch(2))]
export_dir = estimator.export_saved_model({export!r}, serving_input_receiver_fn).decode()
print("RESULT", json.dumps({{"step": int(results["global_step"]), "loss": float(results["loss"]),
                            "predicted": predicted, "names": estimator.get_variable_names(), "export": export_dir}}))
"""


def test_a_program_that_disables_eager_execution_trains_evaluates_predicts_and_exports(tmp_path):
    import json
    import os
    import pathlib
    import sys

    tests = str(pathlib.Path(__file__).resolve().parent)
    program = _EAGER_DISABLED_PROGRAM.format(tests=tests, model_dir=str(tmp_path / "run"),
                                             export=str(tmp_path / "export"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pathlib.Path(tests).parent), tests]))
    done = launcher.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.split("RESULT ", 1)[1])
    on_tf2 = _estimator(tmp_path / "run", execution="tf2").evaluate(eval_input_fn)
    assert result["step"] == 4 and result["names"] == ["b", "global_step", "w"]
    np.testing.assert_allclose(result["loss"], on_tf2["loss"], rtol=1e-5)
    assert tf.io.gfile.exists(os.path.join(result["export"], "saved_model.pb"))


def test_in_memory_evaluator_hook_evaluates_before_the_first_step_every_n_and_at_the_end(tmp_path):
    estimator = _estimator(tmp_path)
    seen = []

    class Record(tf.compat.v1.train.SessionRunHook):
        def end(self, session):
            seen.append(int(session.run(tf.compat.v1.train.get_global_step())))

    hook = estimators.experimental.InMemoryEvaluatorHook(estimator, eval_input_fn, hooks=[Record()], every_n_iter=3,
                                                         name="live")
    estimator.train(train_input_fn, steps=7, hooks=[hook])
    assert seen == [0, 3, 6, 7]
    final = estimator.evaluate(eval_input_fn)
    np.testing.assert_allclose(hook.results["loss"], final["loss"], rtol=1e-6)
    assert estimator.get_variable_names() == ["b", "global_step", "w"]  # the snapshots never went to model_dir


def _model_fn_with_scaffold(**scaffold_parts):
    """linear_model_fn whose spec carries a Scaffold made of scaffold_parts' callables' results."""
    def model_fn(features, labels, mode, params):
        spec = linear_model_fn(features, labels, mode, params)
        return spec._replace(scaffold=tf.compat.v1.train.Scaffold(**{k: make() for k, make in scaffold_parts.items()}))
    return model_fn


def test_in_memory_evaluator_hook_refuses_an_evaluation_scaffold_with_its_own_init_fn(tmp_path):
    model_fn = _model_fn_with_scaffold(init_fn=lambda: lambda scaffold, session: None)
    estimator = estimators.Estimator(model_fn, config=estimators.RunConfig(model_dir=str(tmp_path)))
    with pytest.raises(ValueError, match="does not support custom init_fn"):
        estimators.experimental.InMemoryEvaluatorHook(estimator, eval_input_fn).begin()


def test_in_memory_evaluator_hook_refuses_an_evaluation_scaffold_with_its_own_saver(tmp_path):
    model_fn = _model_fn_with_scaffold(saver=tf.compat.v1.train.Saver)
    estimator = estimators.Estimator(model_fn, config=estimators.RunConfig(model_dir=str(tmp_path)))
    with pytest.raises(ValueError, match="does not support custom saver"):
        estimators.experimental.InMemoryEvaluatorHook(estimator, eval_input_fn).begin()


def test_in_memory_evaluator_hook_refuses_saveables_other_than_global_variables(tmp_path):
    def model_fn(features, labels, mode, params):
        tf.compat.v1.Variable([0.0], trainable=False, collections=[tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS])
        return linear_model_fn(features, labels, mode, params)

    estimator = estimators.Estimator(model_fn, config=estimators.RunConfig(model_dir=str(tmp_path)))
    hook = estimators.experimental.InMemoryEvaluatorHook(estimator, eval_input_fn)
    with pytest.raises(ValueError, match="does not support saveables other than global variables"):
        estimator.train(train_input_fn, steps=2, hooks=[hook])


def test_the_stop_at_checkpoint_step_hook_keeps_its_2_15_private_name():
    from estimators.experimental import checkpoint_step_hook

    assert checkpoint_step_hook._StopAtCheckpointStepHook is checkpoint_step_hook.StopAtCheckpointStepHook


def test_the_private_global_step_reader_public_programs_call(tmp_path):
    from estimators.estimator import _load_global_step_from_checkpoint_dir

    assert _load_global_step_from_checkpoint_dir(str(tmp_path)) == 0
    _estimator(tmp_path, execution="graph").train(train_input_fn, steps=2)
    assert _load_global_step_from_checkpoint_dir(str(tmp_path)) == 2


def test_the_engines_stop_and_logging_hooks_run_on_the_graph_path_as_their_tf1_originals(tmp_path, caplog):
    estimator = _estimator(tmp_path, execution="graph")
    hooks = [estimators.StopAtStepHook(num_steps=3),
             estimators.LoggingTensorHook({"predictions": "MatMul"}, every_n_iter=1)]
    with caplog.at_level("INFO", logger="tensorflow"):
        estimator.train(train_input_fn, hooks=hooks)
    assert estimator.latest_checkpoint().endswith("model.ckpt-3")
    assert sum("predictions = " in record.getMessage() for record in caplog.records) == 3
