"""EstimatorWrappedGraph: model_fn and serving input receivers traced as concrete functions sharing a global step."""

import pytest
import tensorflow as tf

from estimators import EstimatorSpec, ModeKeys
from estimators.export import ServingInputReceiver
from estimators.graph.wrapped_graph import EstimatorWrappedGraph


def _model_fn(features, labels, mode):
    step = tf.compat.v1.train.get_global_step()
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions=features + 1)
    return EstimatorSpec(mode, predictions=features * labels, loss=tf.constant(1.0),
                         train_op=tf.compat.v1.assign_add(step, 1))


def test_a_wrapped_train_model_fn_returns_predictions_and_moves_the_global_step():
    graph = EstimatorWrappedGraph()
    x, y = tf.constant(3, tf.int64), tf.constant(4, tf.int64)
    fn = graph.wrap_model_fn(_model_fn, mode=ModeKeys.TRAIN, args=[x, y, ModeKeys.TRAIN], kwargs={})
    assert int(fn(x, y)["predictions"]) == 12
    assert int(graph.global_step) == 1
    assert graph.estimator_spec.mode == ModeKeys.TRAIN


def test_a_wrapped_predict_model_fn_returns_only_predictions():
    graph = EstimatorWrappedGraph()
    x = tf.constant(7, tf.int64)
    fn = graph.wrap_model_fn(_model_fn, mode=ModeKeys.PREDICT, args=[x, None, ModeKeys.PREDICT], kwargs={})
    assert {k: int(v) for k, v in fn(x).items()} == {"predictions": 8}


def test_model_fn_is_wrapped_once_and_its_spec_is_asked_for_after():
    graph = EstimatorWrappedGraph()
    with pytest.raises(ValueError, match="wrap a model function first"):
        _ = graph.estimator_spec
    x = tf.constant(7, tf.int64)
    graph.wrap_model_fn(_model_fn, mode=ModeKeys.PREDICT, args=[x, None, ModeKeys.PREDICT], kwargs={})
    with pytest.raises(ValueError, match="only called once"):
        graph.wrap_model_fn(_model_fn, mode=ModeKeys.PREDICT, args=[x, None, ModeKeys.PREDICT], kwargs={})


def test_an_input_receiver_gives_one_function_per_receiver():
    def receiver_fn():
        text = tf.compat.v1.placeholder(tf.string, [])
        return ServingInputReceiver({"f": tf.strings.join([text, text])}, {"text": text},
                                    receiver_tensors_alternatives={"alt": text})

    functions = dict((name, fn) for fn, name in EstimatorWrappedGraph().wrap_input_receiver_fn(receiver_fn))
    assert set(functions) == {None, "alt"}
    assert functions[None](tf.constant("a"))["f"].numpy() == b"aa"
