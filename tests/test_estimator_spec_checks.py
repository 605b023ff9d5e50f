"""EstimatorSpec's checks and defaults when it is built, as tf.estimator 2.15 made them (estimators/specs/checks.py)."""

import pytest
import tensorflow as tf

from estimators import EstimatorSpec, ModeKeys
from estimators.export import PredictOutput, RegressionOutput
from estimators.specs import LOSS_METRIC_KEY


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _other_graph(make):
    with tf.Graph().as_default():
        return make()


def test_a_loss_made_in_another_graph_is_refused(graph):
    loss = _other_graph(lambda: tf.constant(1.0))
    with pytest.raises(ValueError, match="loss with .* must be from the default graph"):
        EstimatorSpec(ModeKeys.EVAL, loss=loss)


def test_a_train_op_made_in_another_graph_is_refused(graph):
    train_op = _other_graph(tf.no_op)
    with pytest.raises(ValueError, match="train_op with .* must be from the default graph"):
        EstimatorSpec(ModeKeys.TRAIN, loss=tf.constant(1.0), train_op=train_op)


def test_predictions_made_in_another_graph_are_refused(graph):
    value = _other_graph(lambda: tf.constant([1.0]))
    with pytest.raises(ValueError, match="prediction values with .*y.* must be from the default graph"):
        EstimatorSpec(ModeKeys.PREDICT, predictions={"y": value})


def test_a_metric_pair_made_in_another_graph_is_refused(graph):
    pair = _other_graph(lambda: (tf.constant(1.0), tf.no_op()))
    with pytest.raises(ValueError, match="eval_metric_ops with .* must be from the default graph"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"m": pair})


def test_tensors_of_the_function_being_traced_are_accepted():
    @tf.function
    def build():
        loss = tf.constant(2.0)
        return EstimatorSpec(ModeKeys.EVAL, loss=loss).loss

    assert float(build()) == 2.0


def test_a_sparse_loss_is_refused(graph):
    loss = tf.sparse.SparseTensor(indices=[[0]], values=[0.0], dense_shape=[1])
    with pytest.raises(TypeError, match="loss must be Tensor"):
        EstimatorSpec(ModeKeys.EVAL, loss=loss)


def test_sparse_predictions_are_refused(graph):
    value = tf.sparse.SparseTensor(indices=[[0]], values=[0.0], dense_shape=[1])
    with pytest.raises(TypeError, match=r"predictions\[y\] must be Tensor"):
        EstimatorSpec(ModeKeys.PREDICT, predictions={"y": value})


def test_a_metric_value_may_be_a_nested_tuple_of_tensors(graph):
    loss = tf.constant(1.0)
    spec = EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": ((loss, (tf.constant(2), loss)), tf.no_op())})
    assert list(spec.eval_metric_ops) == ["m"]


def test_predict_spec_without_export_outputs_serves_its_predictions_by_default(graph):
    predictions = {"y": tf.constant([1.0])}
    spec = EstimatorSpec(ModeKeys.PREDICT, predictions=predictions)
    default = spec.export_outputs[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    assert isinstance(default, PredictOutput) and default.outputs == predictions


def test_predict_spec_with_one_export_output_serves_it_by_default(graph):
    head = RegressionOutput(value=tf.constant([1.0]))
    spec = EstimatorSpec(ModeKeys.PREDICT, predictions=tf.constant([1.0]), export_outputs={"head": head})
    assert spec.export_outputs == {"head": head, tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: head}


def test_predict_spec_with_several_export_outputs_and_no_default_is_refused(graph):
    outputs = {"a": RegressionOutput(value=tf.constant([1.0])), "b": RegressionOutput(value=tf.constant([2.0]))}
    with pytest.raises(ValueError, match="Multiple export_outputs were provided"):
        EstimatorSpec(ModeKeys.PREDICT, predictions=tf.constant([1.0]), export_outputs=outputs)


def test_replace_checks_the_new_spec_again(graph):
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="Loss must be scalar"):
        spec._replace(loss=tf.constant([1.0, 2.0]))


def test_replace_cannot_change_the_mode(graph):
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0))
    assert spec._replace(mode=ModeKeys.EVAL).mode == ModeKeys.EVAL
    with pytest.raises(ValueError, match="mode of EstimatorSpec cannot be changed"):
        spec._replace(mode=ModeKeys.TRAIN)


def test_a_tf_keras_metric_in_a_tf1_graph_becomes_its_result_and_update_pair(graph):
    tf_keras = pytest.importorskip("tf_keras")
    metric = tf_keras.metrics.Mean()
    metric.update_state(tf.constant(1.0))
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": metric})
    value, update = spec.eval_metric_ops["mean"]
    assert update is metric.updates[0] and value.graph is graph
    for collection in (tf.compat.v1.GraphKeys.LOCAL_VARIABLES, tf.compat.v1.GraphKeys.METRIC_VARIABLES):
        assert set(metric.variables) <= set(tf.compat.v1.get_collection(collection))


def test_a_tf_keras_metric_never_updated_in_a_tf1_graph_is_refused(graph):
    tf_keras = pytest.importorskip("tf_keras")
    with pytest.raises(ValueError, match=r"Please call update_state\(...\)"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": tf_keras.metrics.Mean()})


def test_loss_metric_key_is_2_15s():
    assert LOSS_METRIC_KEY == "loss"
