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


def test_a_replica_wider_than_the_tpu_hosts_gets_2_15s_error_first(monkeypatch):
    """2.15 asked the TPU system for its cores per host (tensorflow.python.tpu.tpu_system_metadata) and refused a
    replica wider than a host outside PER_HOST_V2; an 8-core-per-host system as TensorFlow's query reports it."""
    from tensorflow.python.tpu import tpu_system_metadata

    system = tpu_system_metadata.TPUSystemMetadata(num_cores=32, num_hosts=4, num_of_cores_per_host=8,
                                                   topology=None, devices=[])
    monkeypatch.setattr(tpu_system_metadata, "_query_tpu_system_metadata", lambda master, **kwargs: system)
    with pytest.raises(ValueError, match=r"num_cores_per_replica: 16, num_cores_per_host: 8\. .*is not supported"):
        _estimator(num_cores_per_replica=16)
    with pytest.raises(ValueError, match=r"^num_cores_per_replica=4 \(model parallelism\) is not supported"):
        _estimator(num_cores_per_replica=4)
    with pytest.raises(ValueError, match=r"^num_cores_per_replica=16 \(model parallelism\) is not supported"):
        _estimator(num_cores_per_replica=16, per_host_input_for_training=InputPipelineConfig.PER_HOST_V2)
