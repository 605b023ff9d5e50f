"""Model parallelism: TPUConfig takes 2.15's settings for it; TPUEstimator refuses them (one core per replica)."""

import pytest

from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.run_config import InputPipelineConfig


def _model_fn(features, labels, mode, params):
    raise AssertionError("not called")


def _estimator(**tpu_settings):
    return TPUEstimator(_model_fn, config=RunConfig(tpu_config=TPUConfig(**tpu_settings)), train_batch_size=8)


def test_tpu_config_accepts_2_15s_valid_partitioning():
    config = TPUConfig(num_cores_per_replica=2, per_host_input_for_training=InputPipelineConfig.PER_HOST_V2,
                       input_partition_dims=[[1, 2, 1, 1], None])
    assert config.num_cores_per_replica == 2


def test_per_shard_input_with_model_parallelism_gets_2_15s_error():
    with pytest.raises(ValueError, match="Model parallelism only supports per host input"):
        _estimator(num_cores_per_replica=2, per_host_input_for_training=False)


def test_several_cores_per_replica_are_refused_by_the_estimator():
    with pytest.raises(ValueError, match=r"model parallelism\) is not supported"):
        _estimator(num_cores_per_replica=2)


def test_input_partitioning_is_refused_by_the_estimator():
    with pytest.raises(ValueError, match="input_partition_dims .* is not supported"):
        _estimator(num_cores_per_replica=1, per_host_input_for_training=InputPipelineConfig.PER_HOST_V2,
                   input_partition_dims=[[1, 2, 1, 1], None])


def test_one_core_per_replica_is_fine():
    assert _estimator(num_cores_per_replica=1) is not None
