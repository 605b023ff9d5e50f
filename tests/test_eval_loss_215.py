"""evaluate()'s loss is 2.15's: the mean of model_fn's losses, one per batch (and replica) run.

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
