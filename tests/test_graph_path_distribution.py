"""Replication as tf.estimator 2.15 ran train_distribute / eval_distribute: input_fn once per worker with its
InputContext, each replica taking its own batch, model_fn once per replica (graph path: in a tf.Graph under
the strategy's scope; TF2 path: in strategy.run). Numbers against 2.15 itself: tests/test_silent_cases_215.py
(the EMA under MirroredStrategy case, on 2 replicas). Here: conftest.py's MirroredStrategy over 8 logical
CPUs (one per process: strategies made side by side reuse collective keys) against one device.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import estimators

X = (np.arange(32, dtype=np.float32).reshape(16, 2) % 7 - 3.0) / 3.0
Y = (X @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)


def linear_model_fn(features, labels, mode):
    """A TF1 linear regression with plain SGD: a v1 optimizer scales each replica's loss by 1/replicas."""
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer([[0.1], [0.2]]))
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features, w) + b
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)})


def batches_of(size: int):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(size)

    return input_fn


def _estimator(tmp_path, strategy, execution: str) -> estimators.Estimator:
    config = estimators.RunConfig(model_dir=str(tmp_path), train_distribute=strategy, eval_distribute=strategy,
                                  execution=execution)
    return estimators.Estimator(linear_model_fn, config=config)


def _weights(estimator: estimators.Estimator) -> np.ndarray:
    return np.concatenate([estimator.get_variable_value("w").ravel(), estimator.get_variable_value("b")])


@pytest.mark.parametrize("execution", ["graph", "tf2"])
def test_each_replica_trains_on_its_own_batch_from_input_fn(tmp_path, execution, eight_replicas):
    """Eight replicas each taking a batch of 2 train as one device on batches of 16 (2.15: the global batch is
    input_fn's batch times the replicas, the v1 optimizer's update the mean over it)."""
    eight = _estimator(tmp_path / "eight", eight_replicas, execution)
    eight.train(batches_of(2), steps=3)
    one = _estimator(tmp_path / "one", None, execution)
    one.train(batches_of(16), steps=3)
    assert eight.get_variable_value("global_step") == 3
    np.testing.assert_allclose(_weights(eight), _weights(one), rtol=1e-5)


@pytest.mark.parametrize("execution", ["graph", "tf2"])
def test_input_fn_gets_the_strategys_input_context(tmp_path, execution, eight_replicas):
    """input_fn that declares input_context is called with the strategy's (one pipeline, eight replicas)."""
    seen = []

    def input_fn(input_context):
        seen.append((input_context.num_input_pipelines, input_context.num_replicas_in_sync))
        return batches_of(4)()

    _estimator(tmp_path, eight_replicas, execution).train(input_fn, steps=1)
    assert seen and set(seen) == {(1, 8)}


def test_evaluation_under_eval_distribute_averages_every_replicas_batches(tmp_path, eight_replicas):
    """evaluate() on eight replicas over 16 rows in batches of 2: the loss and metrics average all 16 rows, as
    one device's evaluation of the same checkpoint does."""
    finite = lambda: tf.data.Dataset.from_tensor_slices((X, Y)).batch(2)  # noqa: E731
    eight = _estimator(tmp_path, eight_replicas, "graph")
    eight.train(batches_of(2), steps=2)
    distributed = eight.evaluate(finite)
    single = estimators.Estimator(linear_model_fn, config=estimators.RunConfig(model_dir=str(tmp_path),
                                                                               execution="graph"))
    local = single.evaluate(finite, name="one_device")
    assert distributed["global_step"] == local["global_step"] == 2
    for key in ("loss", "mae"):
        np.testing.assert_allclose(distributed[key], local[key], rtol=1e-5)


def test_graph_path_refuses_an_input_fn_of_tensors_under_a_strategy(tmp_path, eight_replicas):
    """2.15 needed a Dataset to give each replica its own batches; tensors get one clear error, before training."""
    estimator = _estimator(tmp_path, eight_replicas, "graph")
    with pytest.raises(ValueError, match="must return a tf.data.Dataset|needs it to return a tf.data.Dataset"):
        estimator.train(lambda: (tf.constant(X), tf.constant(Y)), steps=1)
    assert estimator.latest_checkpoint() is None


def test_graph_path_refuses_strategies_it_cannot_replicate_in_one_process(tmp_path):
    """A strategy other than Mirrored/OneDevice (here CentralStorageStrategy) is refused with the way out."""
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    config = estimators.RunConfig(model_dir=str(tmp_path), train_distribute=strategy, execution="graph")
    with pytest.raises(ValueError, match="CentralStorageStrategy.*MirroredStrategy"):
        estimators.Estimator(linear_model_fn, config=config).train(batches_of(4), steps=1)


def test_a_session_config_keeps_the_programs_logical_devices_and_its_own_settings():
    """A tf.compat.v1.Session given a ConfigProto sees only the devices it names: with RunConfig's default
    session_config (2.15's) the 8 logical CPUs became one, every replica was soft-placed on CPU:0 and the first
    training step deadlocked in the per-device input. Sessions now get the process's devices under the config."""
    from estimators.graph.replicated import local_session_config
    from estimators.run_config import get_default_session_config

    given = get_default_session_config()
    given.intra_op_parallelism_threads = 3
    merged = local_session_config(given)
    assert merged.device_count["CPU"] == 8
    assert merged.allow_soft_placement and merged.intra_op_parallelism_threads == 3
    assert merged.graph_options.rewrite_options == given.graph_options.rewrite_options
    assert local_session_config(None) is None
