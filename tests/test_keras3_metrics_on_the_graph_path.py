"""A Keras 3 metric object in eval_metric_ops on the graph path (TF1 graph and session), as 2.15 took a Keras metric.

Under Keras 3, tf.keras.metrics.Mean() is a Keras 3 metric: in a TF1 graph its update_state returns nothing
and keeps no `updates`. 2.15 turned a (then tf.keras) metric object into its (result(), update op) pair with
its variables local; the spec does the same here: the update_op writes what update_state computed, a batch
that fails half-way (the input's end) changes no variable, and the variables stay out of checkpoints.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

import estimators
from estimators import EstimatorSpec, ModeKeys

KEYS = tf.compat.v1.GraphKeys


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run_to_the_end(update, value) -> float:
    """Runs `update` until its input ends, as evaluate() does, then reads `value`."""
    with tf.compat.v1.Session() as session:
        session.run([tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer()])
        while True:
            try:
                session.run(update)
            except tf.errors.OutOfRangeError:
                break
        return float(session.run(value))


def test_a_keras3_metric_in_a_tf1_graph_becomes_a_result_and_update_pair_with_local_variables(graph):
    metric = keras.metrics.Mean()
    metric.update_state(tf.constant([1.0, 2.0, 6.0]))
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": metric})
    value, update = spec.eval_metric_ops["mean"]
    assert value.graph is graph and update.graph is graph
    handles = {variable.handle for variable in metric.variables}
    for collection in (KEYS.LOCAL_VARIABLES, KEYS.METRIC_VARIABLES):
        assert handles <= {variable.handle for variable in tf.compat.v1.get_collection(collection)}
    assert not handles & {variable.handle for variable in tf.compat.v1.global_variables()}
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.local_variables_initializer())
        session.run(update)
        session.run(update)
        assert session.run(value) == pytest.approx(3.0)


def test_the_batch_where_the_input_ends_changes_no_metric_variable(graph):
    # Keras 3 leaves the count's write independent of the input: run alone, the last (failing) batch would
    # still count one more value (mean 45/11 instead of 4.5).
    features = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(10)).get_next()
    metric = keras.metrics.Mean()
    metric.update_state(features)
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": metric})
    assert _run_to_the_end(spec.eval_metric_ops["mean"][1], spec.eval_metric_ops["mean"][0]) == 4.5


def test_a_savers_restore_ops_are_not_taken_for_updates(graph):
    metric = keras.metrics.Mean()
    metric.update_state(tf.constant([2.0]))
    tf.compat.v1.get_variable("w", [])
    saver = tf.compat.v1.train.Saver(var_list=[variable.value for variable in metric.variables])
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"two": metric},
                         scaffold=tf.compat.v1.train.Scaffold(saver=saver))
    value, update = spec.eval_metric_ops["two"]
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.local_variables_initializer())
        session.run(update)
        assert session.run(value) == 2.0


def test_a_keras3_metric_never_updated_in_a_tf1_graph_is_refused(graph):
    with pytest.raises(ValueError, match=r"Please call update_state\(...\) on the \"mean\" metric"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": keras.metrics.Mean()})


def test_a_keras3_metric_never_updated_is_refused_for_that_first_even_from_another_graph(graph):
    with tf.Graph().as_default():
        metric = keras.metrics.Mean()
    with pytest.raises(ValueError, match=r"Please call update_state\(...\)"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": metric})


def test_a_keras3_metric_updated_twice_in_a_tf1_graph_is_refused_with_the_fix(graph):
    # the two updates would each read the old total: the graph cannot order them, so no silent wrong number
    metric = keras.metrics.Mean()
    metric.update_state(tf.constant([1.0]))
    metric.update_state(tf.constant([5.0]))
    with pytest.raises(ValueError, match="called more than once .* Call update_state once"):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": metric})


def test_a_keras3_metric_made_in_another_graph_is_refused(graph):
    with tf.Graph().as_default():
        metric = keras.metrics.Mean()
        metric.update_state(tf.constant([1.0]))
    with pytest.raises(ValueError, match='variables of the "mean" metric must be from the default graph'):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"mean": metric})


def test_evaluate_on_the_graph_path_gives_a_keras3_metrics_value_from_a_trained_checkpoint(tmp_path):
    x = np.arange(8, dtype=np.float32).reshape(8, 1)

    def input_fn():
        return tf.compat.v1.data.Dataset.from_tensor_slices((x, x)).batch(3)

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
        if mode == ModeKeys.TRAIN:
            step = tf.compat.v1.train.get_global_step()
            return EstimatorSpec(mode, loss=loss, train_op=tf.compat.v1.assign_add(step, 1))
        mean = keras.metrics.Mean()
        mean.update_state(features)
        return EstimatorSpec(mode, loss=loss, eval_metric_ops={"mean_x": mean})

    estimator = estimators.Estimator(model_fn, model_dir=str(tmp_path),
                                     config=estimators.RunConfig(execution="graph"))
    estimator.train(input_fn, steps=2)
    first = estimator.evaluate(input_fn)
    again = estimator.evaluate(input_fn)
    assert first["mean_x"] == again["mean_x"] == 3.5  # each evaluation starts the metric from zero
    assert first["global_step"] == 2
    names = {name for name, _ in tf.train.list_variables(estimator.latest_checkpoint())}
    assert not any("total" in name or "count" in name for name in names)


def test_under_mirrored_strategy_a_keras3_metric_sums_over_the_replicas(tmp_path, eight_replicas):
    # each replica writes its own copies of the metric variables; the value reads them summed, as tf.keras's
    # did (replica 0's copies alone would give 0.5, the mean of its one batch)
    x = np.arange(16, dtype=np.float32).reshape(16, 1)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x, x)).batch(2)

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
        mean = keras.metrics.Mean()
        mean.update_state(features)
        return EstimatorSpec(mode, loss=loss, eval_metric_ops={"mean_x": mean})

    config = estimators.RunConfig(model_dir=str(tmp_path), eval_distribute=eight_replicas, execution="graph")
    assert estimators.Estimator(model_fn, config=config).evaluate(input_fn)["mean_x"] == 7.5
