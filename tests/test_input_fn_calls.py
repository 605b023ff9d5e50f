"""input_fn is called once per train(), evaluate() and predict(), as tf.estimator 2.15 called it, on the TF2 path too.

2.15 called input_fn in the call's graph and ran its tensors again at every step. The TF2 path calls it
eagerly; tensors whose values a graph would give again unchanged (constants), and a dataset iterator's
get_next(), need no second call. Random or other stateful tensors are still built again in a graph of their
own, so that RunConfig.tf_random_seed seeds them as 2.15's graph did.
"""

import threading
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.eager import execute
from tensorflow.python.framework import op_callbacks

from estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig

X = np.arange(20, dtype=np.float32).reshape(10, 2)
Y = X[:, :1] * 0.5


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.001).minimize(loss, global_step=step)
    return EstimatorSpec(mode, loss=loss, train_op=train_op)


def _counted(calls: list, make):
    def input_fn():
        calls.append(1)
        return make()

    return input_fn


def _iterator_next(shuffle: bool = False):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4)
    if shuffle:
        dataset = dataset.shuffle(3)
    return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()


def _estimator(tmp_path, execution="tf2"):
    return Estimator(_model_fn, config=RunConfig(model_dir=str(tmp_path), execution=execution))


def test_constant_tensors_are_read_from_one_call_of_input_fn(tmp_path):
    estimator, calls = _estimator(tmp_path), []
    constants = _counted(calls, lambda: ({"x": tf.constant(X)}, tf.constant(Y)))
    estimator.train(constants, steps=3)
    estimator.evaluate(constants, steps=2)
    next(estimator.predict(constants))
    assert len(calls) == 3


def test_an_iterators_get_next_is_read_from_one_call_to_the_end_of_its_data(tmp_path):
    """10 rows in batches of 4: training and evaluation end after 3 batches, as 2.15's OutOfRangeError did."""
    estimator, calls = _estimator(tmp_path), []
    estimator.train(_counted(calls, _iterator_next))
    assert estimator.get_variable_value("global_step") == 3
    predictions = list(estimator.predict(_counted(calls, _iterator_next)))
    assert len(predictions) == 10 and len(calls) == 2


def test_one_call_trains_the_same_numbers_as_a_dataset(tmp_path):
    by_iterator, by_dataset = _estimator(tmp_path / "iterator"), _estimator(tmp_path / "dataset")
    by_iterator.train(_iterator_next)
    by_dataset.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4))
    np.testing.assert_array_equal(by_iterator.get_variable_value("w"), by_dataset.get_variable_value("w"))


def test_a_shuffling_iterator_is_built_again_in_a_graph_and_still_reads_all_its_data(tmp_path):
    estimator, calls = _estimator(tmp_path), []
    estimator.train(_counted(calls, lambda: _iterator_next(shuffle=True)))
    assert estimator.get_variable_value("global_step") == 3 and len(calls) == 2


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_predict_on_input_that_never_ends_logs_2_15s_warning(tmp_path, execution):
    """2.15 warned on tf.compat.v1.logging that predict() yields forever when input_fn's tensors come from no
    dataset and no QueueRunner."""
    estimator = _estimator(tmp_path, execution)
    estimator.train(lambda: ({"x": X}, Y), steps=1)
    with mock.patch.object(tf.compat.v1.logging, "warning") as warning:
        next(estimator.predict(lambda: {"x": tf.constant(X)}))
    assert "Input graph does not read a tf.data.Dataset nor contain a QueueRunner" in str(warning.call_args)


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_predict_on_an_iterator_does_not_warn(tmp_path, execution):
    estimator = _estimator(tmp_path, execution)
    estimator.train(lambda: ({"x": X}, Y), steps=1)
    with mock.patch.object(tf.compat.v1.logging, "warning") as warning:
        list(estimator.predict(_iterator_next))
    assert "QueueRunner" not in str(warning.call_args_list)


def test_watching_input_fn_leaves_no_op_callback_behind_even_when_it_raises(tmp_path):
    def failing_input_fn():
        tf.constant(1.0) + 1.0
        raise KeyError("no such column")

    with pytest.raises(KeyError):
        _estimator(tmp_path).train(failing_input_fn, steps=1)
    assert not op_callbacks.should_invoke_op_callbacks()
    assert execute.execute is execute.quick_execute


def test_a_watch_ending_leaves_another_threads_op_callback_seeing_function_calls(tmp_path):
    """TensorFlow's own remove_op_callback puts every thread's function calls back on the fast path, past any
    callback; ending the watch of input_fn must not do that to a callback another thread (tfdbg, a profiler)
    has."""
    seen = []

    @tf.function
    def plus_one(x):
        return x + 1.0

    plus_one(tf.constant(1.0))
    ready, go = threading.Event(), threading.Event()

    def other_thread():
        callback = lambda op_type, *args, **kwargs: seen.append(op_type)  # noqa: E731
        op_callbacks.add_op_callback(callback)
        ready.set()
        go.wait()
        plus_one(tf.constant(1.0))
        op_callbacks.remove_op_callback(callback)

    thread = threading.Thread(target=other_thread)
    thread.start()
    ready.wait()
    _estimator(tmp_path).train(lambda: ({"x": tf.constant(X)}, tf.constant(Y)), steps=1)
    go.set()
    thread.join()
    assert any("plus_one" in name for name in seen), seen


def test_a_new_estimator_resumes_an_iterator_input_fn_at_its_recorded_position(tmp_path):
    """The recorded input position skips what earlier calls took, with input_fn still called once."""
    def input_fn():
        return next(iter(tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(2)))

    _estimator(tmp_path).train(input_fn, steps=2)
    resumed = _estimator(tmp_path)
    resumed.train(input_fn, steps=2)
    assert resumed.get_variable_value("global_step") == 4


def test_a_list_returned_from_get_next_is_features_and_labels(tmp_path):
    estimator = _estimator(tmp_path)
    estimator.train(lambda: list(_iterator_next()))
    assert estimator.get_variable_value("global_step") == 3


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_a_list_of_arrays_reaches_model_fn_as_a_sequence_of_inputs(tmp_path, execution):
    """2.15 handed model_fn the list an input_fn returned ([x1, x2]: a two-input model's inputs, shapes
    [10, 2] and [10, 1]) rather than stacking it; here model_fn gets the same inputs in order."""
    seen = []

    def model_fn(features, labels, mode):
        seen.append([tuple(f.shape) for f in features])
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.concat(list(features), axis=1), w) - labels))
        return EstimatorSpec(mode, loss=loss, train_op=tf.compat.v1.train.GradientDescentOptimizer(0.001).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()))

    estimator = Estimator(model_fn, config=RunConfig(model_dir=str(tmp_path), execution=execution))
    estimator.train(lambda: ([X, Y], Y), steps=2)
    assert seen[-1] == [(10, 2), (10, 1)]
