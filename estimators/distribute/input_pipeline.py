"""TPUConfig's input pipeline kinds (2.15's InputPipelineConfig): how input_fn is called for a TPU's hosts
and replicas. Low in the layers: RunConfig takes them, distribute/inputs.py acts on them."""

from __future__ import annotations


class InputPipelineConfig:
    """How TPUEstimator calls input_fn (TPUConfig.per_host_input_for_training), with 2.15's values.

    PER_HOST_V1 (= True, the default): once per host with the host's batch (global / hosts), split
    into contiguous per-replica slices. PER_HOST_V2: once per host with the per-replica batch, whose
    consecutive batches go to the host's replicas in turn. PER_SHARD_V1 (= False): once per replica
    (training only). BROADCAST is refused; SLICED is an eval_training_input_configuration value.
    """

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_PIPELINE_NAMES = {1: "PER_SHARD_V1", 2: "PER_HOST_V1", 3: "PER_HOST_V2", 4: "BROADCAST", 5: "SLICED"}


def pipeline_name(value: int) -> str:
    """InputPipelineConfig's name for a value (for messages)."""
    return _PIPELINE_NAMES.get(value, repr(value))
