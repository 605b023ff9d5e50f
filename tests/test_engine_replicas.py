"""Replication: 8 logical CPU replicas behave as one replica on the same global batch."""

from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.run_config import InputPipelineConfig
from tests import engine_models as m


def _estimator(model_dir, strategy=None, params=None, **batches):
    config = RunConfig(model_dir=str(model_dir), train_distribute=strategy, save_checkpoints_steps=1000,
                       tpu_config=TPUConfig(iterations_per_loop=5))
    sizes = dict(train_batch_size=32, eval_batch_size=16, predict_batch_size=16)
    sizes.update(batches)
    return TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, params=params or {}, **sizes)


def _weights(estimator):
    return [estimator.get_variable_value(n) for n in ("sequential/dense/kernel", "sequential/dense/bias")]


@pytest.mark.parametrize("params", [{}, {"adam": True}], ids=["sgd", "adam"])
def test_eight_replicas_take_the_same_steps_as_one(tmp_path, eight_replicas, params):
    x, y = m.dataset(320)
    one = _estimator(tmp_path / "one", params=params).train(m.train_input_fn(x, y), max_steps=10)
    eight = _estimator(tmp_path / "eight", eight_replicas, params=params).train(m.train_input_fn(x, y), max_steps=10)
    for a, b in zip(_weights(one), _weights(eight), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)
    assert not np.allclose(_weights(one)[0], _initial_weights()[0], atol=1e-3)


def test_sum_reduction_takes_steps_replicas_times_larger(tmp_path, eight_replicas):
    x, y = m.dataset(64)
    mean = _estimator(tmp_path / "mean", eight_replicas, params={"lr": 0.01})
    total = _estimator(tmp_path / "sum", eight_replicas, params={"lr": 0.01, "reduction": "sum"})
    mean.train(m.train_input_fn(x, y), max_steps=1)
    total.train(m.train_input_fn(x, y), max_steps=1)
    # One SGD step from the same initial weights: the "sum" step is 8x the "mean" step.
    initial = _initial_weights()[0]
    mean_step = _weights(mean)[0] - initial
    sum_step = _weights(total)[0] - initial
    np.testing.assert_allclose(sum_step, 8 * mean_step, rtol=1e-4, atol=1e-7)


def test_checkpoint_from_eight_replicas_evaluates_on_one_and_back(tmp_path, eight_replicas):
    x, y = m.dataset(200)
    eight = _estimator(tmp_path, eight_replicas).train(m.train_input_fn(x, y), max_steps=5)
    single = _estimator(tmp_path)
    on_one = single.evaluate(m.eval_input_fn(x, y))
    on_eight = _estimator(tmp_path, eight_replicas).evaluate(m.eval_input_fn(x, y))
    kernel, bias = _weights(eight)
    loss, accuracy = m.numpy_eval(kernel, bias, x, y, batch_size=16)
    assert on_one["global_step"] == on_eight["global_step"] == 5
    assert on_one["loss"] == pytest.approx(loss, rel=1e-5)
    assert on_eight["loss"] == pytest.approx(loss, rel=1e-5)
    assert on_one["accuracy"] == on_eight["accuracy"] == pytest.approx(accuracy)
    # ... and a checkpoint written with one replica trains on with eight.
    single.train(m.train_input_fn(x, y), max_steps=8)
    resumed = _estimator(tmp_path, eight_replicas).train(m.train_input_fn(x, y), max_steps=10)
    assert resumed.get_variable_value("global_step") == 10


def test_predict_yields_every_example_once_in_order_across_eight_replicas(tmp_path, eight_replicas):
    x, y = m.dataset(53)  # 53 does not divide by the global batch of 16 (8 replicas x 2)
    estimator = _estimator(tmp_path, eight_replicas).train(m.train_input_fn(x, y), max_steps=3)
    predictions = list(estimator.predict(m.predict_input_fn(x)))
    kernel, bias = _weights(estimator)
    assert len(predictions) == 53
    np.testing.assert_allclose(np.stack([p["logits"] for p in predictions]), x @ kernel + bias, rtol=1e-5, atol=1e-5)


def _initial_weights():
    model = m.linear_model()
    model.build((None, m.FEATURES))
    return [w.numpy() for w in model.weights]


def test_evaluate_counts_every_example_once_across_eight_replicas(tmp_path, eight_replicas):
    x, y = m.dataset(53)
    estimator = _estimator(tmp_path, eight_replicas).train(m.train_input_fn(x, y), max_steps=3)
    result = estimator.evaluate(m.eval_input_fn(x, y))
    kernel, bias = _weights(estimator)
    loss, accuracy = m.numpy_eval(kernel, bias, x, y, batch_size=16)
    assert result["examples"] == 53
    assert result["accuracy"] == pytest.approx(accuracy)
    assert result["loss"] == pytest.approx(loss, rel=1e-5)


@pytest.mark.parametrize("iterations_per_loop", [1, 4])
def test_a_finite_train_input_ends_at_the_last_step_every_replica_has_a_batch_for(
        tmp_path, eight_replicas, iterations_per_loop):
    # 13 per-replica batches of 4 feed one whole step of 8 replicas; the 5 left over are not a step
    # (TPUEstimator's infeed could not run it; tf.distribute would give 3 replicas empty batches).
    x, y = m.dataset(52)

    def finite_input_fn(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(params["batch_size"], drop_remainder=True)

    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas,
                       tpu_config=TPUConfig(iterations_per_loop=iterations_per_loop))
    estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=32)
    estimator.train(finite_input_fn, max_steps=10)
    one = _estimator(tmp_path / "one").train(m.train_input_fn(x[:32], y[:32]), max_steps=1)
    assert estimator.get_variable_value("global_step") == 1
    for a, b in zip(_weights(one), _weights(estimator), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


def test_a_resumed_pod_skips_the_batches_of_this_hosts_cores_only(tmp_path):
    # TPUStrategy's worker_devices lists every core of every host; with PER_HOST_V2 each host's pipeline
    # feeds per-core batches to its own cores, so a resumed stream skips (steps x cores per host) batches,
    # not (steps x all cores). With PER_HOST_V1 (the default) a step takes one host batch.
    pod = SimpleNamespace(extended=SimpleNamespace(
        num_replicas_per_host=8, worker_devices=tuple(f"/job:worker/task:{i // 8}/device:TPU:{i % 8}"
                                                      for i in range(32))))
    v2 = TPUConfig(iterations_per_loop=5, per_host_input_for_training=InputPipelineConfig.PER_HOST_V2)
    estimator = TPUEstimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path), tpu_config=v2),
                             use_tpu=False, train_batch_size=32)
    assert estimator._deployment.input_elements_per_step(pod) == 8
    assert _estimator(tmp_path / "v1")._deployment.input_elements_per_step(pod) == 1
