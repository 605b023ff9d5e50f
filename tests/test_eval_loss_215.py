"""evaluate()'s loss is 2.15's: the mean of model_fn's losses, one per batch (and replica) run.

TPUEstimator(use_tpu=False) too: 2.15 ran it on one CPU, one model_fn call per input_fn batch (3.3333333 and
21.666666 below, printed by 2.15 for these programs); over eight replicas each slice weighs its part of its batch.

tf.estimator 2.15 reported `tf.compat.v1.metrics.mean(loss)` over the evaluation: a partial last batch weighs
as much as a full one. The TF2 path used to weight batches by their rows (3.0 below, silently). References,
printed by TF 2.15.1 + tensorflow-estimator 2.15.0 for these programs: 3.3333333 (rows 1..5, batches of 2) and
4.375 (rows 1..7, batches of 2, eval_distribute over 2 CPU replicas); the metric `m` (a mean over rows) is 3.0
and 4.0 in both.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimators


def _input_fn(rows):
    values = [[float(i)] for i in range(1, rows + 1)]
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": values}, values)).batch(2)


def _model_fn(scaffold):
    def model_fn(features, labels, mode):
        del features
        w = tf.compat.v1.get_variable("w", initializer=1.0)
        extra = {"scaffold": tf.compat.v1.train.Scaffold()} if scaffold else {}
        return estimators.EstimatorSpec(mode, loss=tf.reduce_mean(labels * w),
                                        train_op=tf.compat.v1.train.get_global_step().assign_add(1),
                                        eval_metric_ops={"m": tf.compat.v1.metrics.mean(labels)}, **extra)

    return model_fn


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_a_partial_last_batch_weighs_as_much_as_a_full_one(tmp_path, execution):
    config = estimators.RunConfig(model_dir=str(tmp_path), execution=execution)
    estimator = estimators.Estimator(_model_fn(execution == "graph"), config=config)
    estimator.train(_input_fn(5), steps=1)
    results = estimator.evaluate(_input_fn(5))
    np.testing.assert_allclose([results["loss"], results["m"]], [3.3333333, 3.0], rtol=1e-6)


def test_replicas_losses_are_averaged_per_replica_batch(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = estimators.RunConfig(model_dir=str(tmp_path), eval_distribute=strategy)
    estimator = estimators.Estimator(_model_fn(False), config=config)
    estimator.train(_input_fn(7), steps=1)
    results = estimator.evaluate(_input_fn(7))
    np.testing.assert_allclose([results["loss"], results["m"]], [4.375, 4.0], rtol=1e-6)


def _tpu_input_fn(first, end, drop_remainder=False):
    def input_fn(params):
        values = [[float(i)] for i in range(first, end)]
        return tf.data.Dataset.from_tensor_slices(({"x": values}, values)).batch(params["batch_size"],
                                                                                  drop_remainder=drop_remainder)

    return input_fn


def _tpu_model_fn(features, labels, mode, params):
    del features, params
    w = tf.compat.v1.get_variable("w", initializer=1.0)
    return estimators.TPUEstimatorSpec(mode, loss=tf.reduce_mean(labels * w),
                                       train_op=tf.compat.v1.train.get_global_step().assign_add(1))


def _tpu_cpu_loss(tmp_path, first, end, batch_size, strategy=None,
                  deployment=estimators.InputPipelineConfig.PER_HOST_V1):
    tpu_config = estimators.TPUConfig(per_host_input_for_training=deployment)
    config = estimators.RunConfig(model_dir=str(tmp_path), train_distribute=strategy, tpu_config=tpu_config)
    estimator = estimators.TPUEstimator(_tpu_model_fn, use_tpu=False, config=config, train_batch_size=batch_size,
                                        eval_batch_size=batch_size)
    estimator.train(_tpu_input_fn(first, end, drop_remainder=True), steps=1)
    return estimator.evaluate(_tpu_input_fn(first, end))["loss"]


@pytest.mark.parametrize("deployment", ["PER_HOST_V1", "PER_HOST_V2"])
def test_tpu_estimator_off_the_tpu_averages_input_fn_batches(tmp_path, deployment):
    # 2.15 (TPUEstimator(use_tpu=False), rows 1..5, eval_batch_size 2): 3.3333333; the rows' mean is 3.0.
    # Off the TPU 2.15 called input_fn the same way for every deployment.
    kind = getattr(estimators.InputPipelineConfig, deployment)
    np.testing.assert_allclose(_tpu_cpu_loss(tmp_path, 1, 6, 2, deployment=kind), 3.3333333, rtol=1e-6)


def test_tpu_estimator_off_the_tpu_averages_host_batches_over_eight_replicas(tmp_path, eight_replicas):
    # 2.15 (one CPU, rows 0..36, eval_batch_size 16): 21.666666, the mean of batch means 7.5, 23.5 and 34.
    # Eight replicas get slices of each host batch (PER_HOST_V1), the last batch's 5 rows on 3 of them.
    np.testing.assert_allclose(_tpu_cpu_loss(tmp_path / "one", 0, 37, 16), 21.666666, rtol=1e-6)
    np.testing.assert_allclose(_tpu_cpu_loss(tmp_path / "eight", 0, 37, 16, eight_replicas), 21.666666, rtol=1e-6)
