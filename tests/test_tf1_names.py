"""Names TF1-era programs reach for under tf.estimator / tf.compat.v1.estimator, each working as in 2.15.

The numpy_input_fn / pandas_input_fn batches are compared with what TF 2.15 gave for the same cases
(tests/tf1_input_cases.py; tests/reference/tf1_inputs_215.json, written by make_tf1_inputs_215.py).
"""

import json
import os
import sys
import types

import numpy as np
import pytest
import tensorflow as tf

import estimators
from estimators import experimental, export, inputs
from tests import tf1_input_cases as cases

with open(os.path.join(os.path.dirname(__file__), "reference", "tf1_inputs_215.json")) as _f:
    REFERENCE = json.load(_f)

needs_pandas = pytest.mark.skipif(cases.pd is None, reason="pandas is not installed")


def make(kind, kwargs):
    maker = inputs.numpy_input_fn if kind == "numpy" else inputs.pandas_input_fn
    return maker(**cases.arguments(kind, kwargs))


def case_params(table):
    return [pytest.param(name, marks=needs_pandas) if table[name][0] == "pandas" else name for name in table]


def normalised(value):
    return json.loads(json.dumps(value))


def static_of(structure):
    return normalised(tf.nest.map_structure(lambda s: {"dtype": s.dtype.name, "shape": s.shape.as_list()}, structure))


# -- numpy_input_fn / pandas_input_fn ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", case_params(cases.CASES))
def test_input_fn_gives_215s_batches_dtypes_and_static_shapes_in_eager_mode(name):
    kind, kwargs, take = cases.CASES[name]
    dataset = make(kind, kwargs)()
    assert isinstance(dataset, tf.data.Dataset)
    batches = [tf.nest.map_structure(lambda t: cases.as_json(t.numpy()), batch)
               for batch in (dataset if take is None else dataset.take(take))]
    assert normalised(batches) == REFERENCE[name]["batches"]
    assert static_of(dataset.element_spec) == REFERENCE[name]["static"]


@pytest.mark.parametrize("name", case_params({n: cases.CASES[n] for n in (
    "numpy_epochs_run_on_without_a_break", "numpy_array_x_is_a_bare_tensor", "pandas_series_y")}))
def test_input_fn_called_by_a_program_building_a_tf1_graph_gives_215s_tensors_until_out_of_range(name):
    kind, kwargs, _ = cases.CASES[name]
    input_fn = make(kind, kwargs)
    with tf.Graph().as_default():
        batch = input_fn()  # 2.15: a queue's dequeued tensors, so `features, labels = input_fn()` works
        assert not isinstance(batch, tf.data.Dataset)
        assert static_of(batch) == REFERENCE[name]["static"]
        batches = []
        with tf.compat.v1.Session() as session:
            while True:
                try:
                    batches.append(tf.nest.map_structure(cases.as_json, session.run(batch)))
                except tf.errors.OutOfRangeError:
                    break
    assert normalised(batches) == REFERENCE[name]["batches"]


def test_input_fn_called_by_the_engine_inside_a_tf1_graph_gives_its_dataset():
    from estimators.compat.input_fn_call import bound_input_fn

    input_fn = inputs.numpy_input_fn({"x": np.arange(3.0)}, np.arange(3.0), batch_size=2, shuffle=False)
    with tf.Graph().as_default() as graph:
        dataset = bound_input_fn(input_fn, mode="train", params={}, config=None)()
        assert isinstance(dataset, tf.data.Dataset) and dataset._graph is graph


@pytest.mark.parametrize("name", case_params(cases.ERRORS))
def test_bad_arguments_raise_215s_error_at_the_same_moment(name):
    kind, kwargs, _ = cases.ERRORS[name]
    expected = REFERENCE["errors"][name]
    stage = "make"
    with pytest.raises((TypeError, ValueError)) as raised:
        input_fn = make(kind, kwargs)
        stage = "call"
        input_fn()
    assert (stage, type(raised.value).__name__) == (expected["stage"], expected["type"])
    assert str(raised.value).startswith(expected["message"].split(": ")[0])


def test_shuffle_reads_every_example_num_epochs_times_in_another_order():
    x = {"i": np.arange(100)}
    tf.random.set_seed(3)
    batches = list(inputs.numpy_input_fn(x, batch_size=32, num_epochs=2, shuffle=True, queue_capacity=50)())
    order = np.concatenate([batch["i"].numpy() for batch in batches])
    assert [len(b["i"]) for b in batches] == [32, 32, 32, 32, 32, 32, 8]  # one stream, the short batch last
    assert sorted(order.tolist()) == sorted(list(range(100)) * 2)
    assert order.tolist() != list(range(100)) * 2


def test_num_epochs_none_repeats_forever():
    dataset = inputs.numpy_input_fn({"i": np.arange(3)}, batch_size=2, num_epochs=None, shuffle=False)()
    assert dataset.cardinality().numpy() == tf.data.INFINITE_CARDINALITY


def test_pandas_input_fn_without_pandas_is_a_type_error_naming_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas then raises ImportError
    with pytest.raises(TypeError, match="pandas_input_fn needs pandas.*pip install pandas"):
        inputs.pandas_input_fn(object(), shuffle=False)


def test_numpy_input_fn_feeds_an_estimator_until_its_epochs_end(tmp_path):
    x = np.arange(10, dtype=np.float32)

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.001).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = estimators.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(inputs.numpy_input_fn({"x": x}, 2 * x, batch_size=4, num_epochs=2, shuffle=False))
    assert estimator.get_variable_value("global_step") == 5  # 20 examples in batches of 4
    assert estimator.get_variable_value("w") > 0


def test_inputs_is_a_module_as_tf_compat_v1_estimator_inputs():
    assert isinstance(estimators.inputs, types.ModuleType)
    assert set(inputs.__all__) == {"numpy_input_fn", "pandas_input_fn"}


# -- re-exported names ---------------------------------------------------------------------------------------------
SESSION_NAMES = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "CheckpointSaverHook",
                 "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "NanTensorHook",
                 "ProfilerHook", "SecondOrStepTimer", "StepCounterHook", "SummarySaverHook",
                 "NanLossDuringTrainingError", "VocabInfo"]


@pytest.mark.parametrize("name", SESSION_NAMES)
def test_session_hook_names_are_tensorflows_own_tf_compat_v1_train_classes(name):
    assert getattr(estimators, name) is getattr(tf.compat.v1.train, name)
    assert name in estimators.__all__


def test_logging_tensor_hook_and_stop_at_step_hook_stay_the_engines_own():
    assert estimators.LoggingTensorHook is not tf.compat.v1.train.LoggingTensorHook
    assert estimators.StopAtStepHook is not tf.compat.v1.train.StopAtStepHook


def test_add_metrics_and_eval_output_are_at_the_top_level():
    from estimators.extenders import add_metrics

    assert estimators.add_metrics is add_metrics
    assert estimators.EvalOutput is export.EvalOutput


@pytest.mark.parametrize("module", [estimators, export, experimental, inputs], ids=lambda m: m.__name__)
def test_every_name_in_all_exists(module):
    for name in module.__all__:
        assert hasattr(module, name), name


# -- call_logit_fn ---------------------------------------------------------------------------------------------------
def test_call_logit_fn_passes_only_the_arguments_logit_fn_declares():
    seen = {}

    def logit_fn(features, params):
        seen.update(features=features, params=params)
        return tf.constant([1.0])

    result = estimators.call_logit_fn(logit_fn, {"x": 1}, "train", {"units": 3}, "config")
    assert seen == {"features": {"x": 1}, "params": {"units": 3}}
    assert result.numpy().tolist() == [1.0]
    assert experimental.call_logit_fn is estimators.call_logit_fn  # 2.15's tf.estimator.experimental name


def test_call_logit_fn_accepts_a_dict_of_string_to_tensor():
    logits = {"head": tf.constant([0.5])}
    assert estimators.call_logit_fn(lambda features, mode, config: logits, {}, "eval", None, None) is logits


@pytest.mark.parametrize("bad", [[tf.constant(1.0)], {1: tf.constant(1.0)}, {"a": 1.0}, np.ones(2)],
                         ids=["list", "int-key", "float-value", "ndarray"])
def test_call_logit_fn_refuses_anything_but_a_tensor_or_a_dict_of_tensors(bad):
    with pytest.raises(ValueError, match="logit_fn should return a Tensor or a dictionary mapping strings to Tensors"):
        estimators.call_logit_fn(lambda features: bad, {}, "train", None, None)


# -- supervised receivers and outputs --------------------------------------------------------------------------------
def test_raw_supervised_receiver_makes_batch_free_placeholders_for_features_and_labels():
    receiver_fn = export.build_raw_supervised_input_receiver_fn(
        {"x": tf.zeros([8, 3]), "ids": tf.zeros([8], tf.int64)}, {"y": np.zeros((8, 1), np.int32)})
    with tf.Graph().as_default():
        receiver = receiver_fn()
    assert isinstance(receiver, export.SupervisedInputReceiver)
    assert sorted(receiver.receiver_tensors) == ["ids", "x", "y"]
    assert receiver.features["x"].shape.as_list() == [None, 3] and receiver.features["x"].op.type == "Placeholder"
    assert receiver.labels["y"].dtype == tf.int32 and receiver.labels["y"].shape.as_list() == [None, 1]
    assert experimental.build_raw_supervised_input_receiver_fn is export.build_raw_supervised_input_receiver_fn


def test_raw_supervised_receiver_feeds_single_tensors_as_input_and_label():
    receiver_fn = export.build_raw_supervised_input_receiver_fn(tf.zeros([4, 2]), tf.zeros([4]), default_batch_size=4)
    with tf.Graph().as_default():
        receiver = receiver_fn()
    assert sorted(receiver.receiver_tensors) == ["input", "label"]
    assert receiver.features is receiver.receiver_tensors["input"] and receiver.features.shape.as_list() == [4, 2]
    assert receiver.labels is receiver.receiver_tensors["label"]


def test_raw_supervised_receiver_refuses_a_key_in_both_features_and_labels():
    with pytest.raises(ValueError, match="Features and labels must have distinct keys"):
        export.build_raw_supervised_input_receiver_fn({"label": tf.zeros([1])}, tf.zeros([1]))


def test_supervised_receiver_from_an_input_fn_takes_its_dataset_structure_with_any_batch():
    def input_fn(batch):
        data = ({"x": np.zeros((6, 2), np.float32)}, np.zeros(6, np.int64))
        return tf.data.Dataset.from_tensor_slices(data).batch(batch, drop_remainder=True)

    receiver_fn = export.build_supervised_input_receiver_fn_from_input_fn(input_fn, batch=3)
    with tf.Graph().as_default():
        receiver = receiver_fn()
    assert receiver.features["x"].shape.as_list() == [None, 2]
    assert receiver.labels.dtype == tf.int64 and receiver.labels.shape.as_list() == [None]


def test_supervised_input_receiver_checks_features_labels_and_receiver_tensors():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None])
        receiver = export.SupervisedInputReceiver({"x": x}, x, x)
        assert receiver.receiver_tensors == {"input": x} and receiver.labels is x
        with pytest.raises(ValueError, match="label"):
            export.SupervisedInputReceiver({"x": x}, "not a tensor", x)


def test_unsupervised_input_receiver_is_a_serving_receiver_without_alternatives():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None])
        receiver = export.UnsupervisedInputReceiver(x, {"x": x})
    assert isinstance(receiver, export.ServingInputReceiver)
    assert receiver.receiver_tensors_alternatives is None and receiver.features == {"feature": x}


def test_eval_output_keys_are_215s_prefixed_names():
    with tf.Graph().as_default():
        loss, scores = tf.constant(1.0), tf.constant([0.1])
        value, update = tf.compat.v1.metrics.mean(scores)
        output = export.EvalOutput(loss=loss, predictions={"scores": scores}, metrics={"mean": (value, update)})
    assert output.loss == {"loss": loss}
    assert output.predictions == {"predictions/scores": scores}
    assert sorted(output.metrics) == ["metrics/mean/update_op", "metrics/mean/value"]
    assert output.metrics["metrics/mean/value"] is value


def test_a_metric_update_operation_is_exported_as_a_tensor_that_runs_it():
    with tf.Graph().as_default():
        total = tf.Variable(0.0)
        update = total.assign_add(1.0).op
        output = export.TrainOutput(loss=tf.constant(0.0), metrics={"n": (tf.identity(total), update)})
        wrapped = output.metrics["metrics/n/update_op"]
        assert isinstance(wrapped, tf.Tensor) and update in wrapped.op.control_inputs


def test_eval_and_train_outputs_are_not_serving_signatures():
    with tf.Graph().as_default():
        inputs_ = {"x": tf.compat.v1.placeholder(tf.float32, [None])}
        for output_class, method in ((export.EvalOutput, "tensorflow/supervised/eval"),
                                     (export.TrainOutput, "tensorflow/supervised/training")):
            output = output_class(loss=tf.constant(0.0))
            assert isinstance(output, export.ExportOutput)
            with pytest.raises(ValueError, match="not a serving signature"):
                output.signature(inputs_)  # a serving export leaves it out, as 2.15 did
            assert output.supervised_signature(inputs_).method_name == method


# -- make_stop_at_checkpoint_step_hook -----------------------------------------------------------------------------
def test_the_chief_gets_a_plain_stop_at_step_hook(tmp_path):
    estimator = estimators.Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path))
    hook = experimental.make_stop_at_checkpoint_step_hook(estimator, last_step=7)
    assert type(hook) is tf.compat.v1.train.StopAtStepHook


def run_worker(model_dir, step, checkpoint_step, runs, monkeypatch):
    """Runs a worker session (global step fixed at `step`) with the hook up to `runs` times: (runs taken, sleeps)."""
    sleeps = []
    monkeypatch.setattr("estimators.experimental.checkpoint_step_hook.time.sleep", sleeps.append)
    with tf.Graph().as_default():
        with tf.compat.v1.Session() as session:  # the chief's newest checkpoint
            saved = tf.Variable(tf.constant(checkpoint_step, tf.int64), name="global_step")
            session.run(saved.initializer)
            tf.compat.v1.train.Saver([saved]).save(session, os.path.join(model_dir, "model.ckpt"))
    with tf.Graph().as_default():
        tf.compat.v1.get_variable("global_step", initializer=tf.constant(step, tf.int64), trainable=False,
                                  collections=[tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
                                               tf.compat.v1.GraphKeys.GLOBAL_STEP])
        worker = types.SimpleNamespace(config=types.SimpleNamespace(is_chief=False), model_dir=model_dir)
        hook = experimental.make_stop_at_checkpoint_step_hook(worker, last_step=3, wait_after_file_check_secs=5)
        assert isinstance(hook, tf.compat.v1.train.SessionRunHook)
        work = tf.no_op()
        taken = 0
        with tf.compat.v1.train.MonitoredSession(hooks=[hook]) as session:
            while not session.should_stop() and taken < runs:
                session.run(work)
                taken += 1
    return taken, sleeps


def test_a_worker_before_last_step_neither_reads_the_checkpoint_nor_waits(tmp_path, monkeypatch):
    assert run_worker(str(tmp_path), step=1, checkpoint_step=5, runs=4, monkeypatch=monkeypatch) == (4, [])


def test_a_worker_stops_at_last_step_once_the_newest_checkpoint_has_reached_it(tmp_path, monkeypatch):
    assert run_worker(str(tmp_path), step=2, checkpoint_step=3, runs=4, monkeypatch=monkeypatch) == (1, [])


def test_a_worker_at_last_step_waits_while_the_checkpoint_is_behind(tmp_path, monkeypatch):
    assert run_worker(str(tmp_path), step=2, checkpoint_step=1, runs=3, monkeypatch=monkeypatch) == (3, [5, 5, 5])
