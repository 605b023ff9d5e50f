"""TPUEstimator._ctx: per mode, the master and the TPU job computations are placed on (2.15's master_job)."""

import pytest
import tensorflow as tf

from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.mode_keys import ModeKeys


def _model_fn(features, labels, mode, params):
    raise AssertionError("not called")


def _master_job(config, mode=ModeKeys.TRAIN):
    with TPUEstimator(_model_fn, config=config, train_batch_size=8)._ctx.with_mode(mode) as ctx:
        return ctx.master_job


def _cluster(*jobs):
    cluster_def = tf.compat.v1.ConfigProto().cluster_def
    for name in jobs:
        cluster_def.job.add(name=name).tasks[0] = "10.0.0.1:8470"
    return tf.compat.v1.ConfigProto(cluster_def=cluster_def)


def test_a_local_master_names_no_job():
    assert _master_job(RunConfig()) is None


def test_a_remote_master_without_a_cluster_def_is_tpu_worker():
    assert _master_job(RunConfig(master="grpc://10.0.0.1:8470"), ModeKeys.EVAL) == "tpu_worker"


def test_the_cluster_defs_job_beside_the_coordinator():
    config = RunConfig(master="grpc://10.0.0.1:8470", session_config=_cluster("worker", "coordinator"))
    assert _master_job(config) == "worker"


def test_an_ambiguous_cluster_def_asks_for_tpu_job_name():
    config = RunConfig(master="grpc://10.0.0.1:8470", session_config=_cluster("a", "b"))
    with pytest.raises(ValueError, match="tpu_job_name"):
        _master_job(config)


def test_tpu_job_name_wins():
    assert _master_job(RunConfig(tpu_config=TPUConfig(tpu_job_name="mine"))) == "mine"


def test_mode_must_be_bound_first():
    context = TPUEstimator(_model_fn, config=RunConfig(), train_batch_size=8)._ctx
    with pytest.raises(RuntimeError, match="with_mode"):
        _ = context.master_job
