"""TPUEstimator: TPUEstimator 2.15's constructor on tf.distribute; where each mode runs and what model_fn and
input_fn see is its deployment (estimators/tpu/deployment.py). Programs are always built with static shapes, so
a model that runs here compiles for a TPU.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.compat.ignored_settings import log_ignored
from estimators.compat.tpu_job import TPUJobContext
from estimators.estimator import Estimator
from estimators.mode_keys import ModeKeys
from estimators.run_config import InputPipelineConfig, RunConfig, pipeline_name
from estimators.tpu.deployment import BATCH_ARGS, TPUDeployment

_RESERVED_PARAMS = ("batch_size", "context")


class ExportSavedModelApiVersion(enum.Enum):
    """TPUEstimator's export_saved_model_api_version (it shaped only the TPU serving graph, not written here)."""

    V1 = 1
    V2 = 2


class TPUEstimator(Estimator):
    """Estimator with TPUEstimator 2.15's contract, on a TPU (use_tpu=True) or local GPUs/CPU.

    With use_tpu=True, training and prediction run on the TPU and evaluation too unless
    eval_on_tpu=False (then on the GPUs RunConfig.num_gpus picks, or the CPU). With use_tpu=False
    everything runs on the configured strategy or local devices. Exports write the CPU serving graph.
    """

    def __init__(self, model_fn: Callable | None = None, model_dir: str | None = None,
                 config: RunConfig | None = None, params: dict | None = None, use_tpu: bool = True,
                 train_batch_size: int | None = None, eval_batch_size: int | None = None,
                 predict_batch_size: int | None = None, batch_axis: Any = None, eval_on_tpu: bool = True,
                 export_to_tpu: bool = True, export_to_cpu: bool = True, warm_start_from: Any = None,
                 embedding_config_spec: Any = None,
                 export_saved_model_api_version: Any = ExportSavedModelApiVersion.V1):
        for key in _RESERVED_PARAMS:
            if key in (params or {}):
                raise ValueError(
                    f"params['{key}'] is reserved: {list(_RESERVED_PARAMS)} are reserved keys TPUEstimator sets "
                    "(params['batch_size']: pass train_batch_size/eval_batch_size/predict_batch_size instead)."
                )
        if embedding_config_spec is not None:
            raise ValueError("embedding_config_spec (TPU embeddings) is not supported; use keras_rs instead.")
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        for mode, size in self._batch_sizes.items():
            if size is not None and (not isinstance(size, int) or isinstance(size, bool)):
                raise TypeError(f"`{BATCH_ARGS[mode]}` must be int (a positive integer), got {size!r} of type "
                                f"{type(size).__name__}.")
            if size is not None and size < 1:
                raise ValueError(f"{BATCH_ARGS[mode]} must be a positive integer, got {size!r}.")
        if use_tpu and train_batch_size is None:
            raise ValueError("`train_batch_size` cannot be `None`: TPUEstimator(use_tpu=True) needs train_batch_size "
                             "(the global batch).")
        if export_saved_model_api_version not in (1, 2, *ExportSavedModelApiVersion):
            raise ValueError(f"export_saved_model_api_version must be 1 or 2, got {export_saved_model_api_version!r}.")
        self._use_tpu = bool(use_tpu)
        self._eval_on_tpu = bool(eval_on_tpu)
        deployment = functools.partial(TPUDeployment, batch_sizes=self._batch_sizes, use_tpu=self._use_tpu,
                                       eval_on_tpu=self._eval_on_tpu, export_to_tpu=bool(export_to_tpu),
                                       export_to_cpu=bool(export_to_cpu))
        self._setup(model_fn, model_dir, config, params, warm_start_from, deployment)
        _check_batch_axis(batch_axis, self._config.tpu_config.per_host_input_for_training)
        _check_one_core_per_replica(self._config.tpu_config, self._config.master if self._use_tpu else None)

    def _verify_model_fn_args(self, model_fn: Callable, params: dict | None) -> None:
        """Params are the TPUEstimator's own (it adds batch_size and context), so only the arguments are checked:
        2.15's TPUEstimator wrapped model_fn, whose wrapper always took params."""
        super()._verify_model_fn_args(model_fn, None)

    @property
    def _ctx(self) -> TPUJobContext:
        """2.15's internal context: `with est._ctx.with_mode(mode) as ctx` answers ctx.master_job and the like."""
        return TPUJobContext(self._config, use_tpu=self._use_tpu, eval_on_tpu=self._eval_on_tpu)


def _check_one_core_per_replica(tpu_config: Any, master: str | None) -> None:
    """Model parallelism (a replica over several cores) is refused: every replica here runs on one core.
    What 2.15 refused too comes with its message first: per-shard input, and (use_tpu, `master` given) a replica
    wider than the TPU system's hosts, outside PER_HOST_V2 / BROADCAST input."""
    cores = tpu_config.num_cores_per_replica
    if cores and tpu_config.per_host_input_for_training == InputPipelineConfig.PER_SHARD_V1:
        raise ValueError("Model parallelism only supports per host input for training. Please adjust "
                         "TPURunconfig.per_host_input_for_training.")
    if cores is not None and cores > 1:
        prefix = ""
        per_host = 0 if tpu_config.per_host_input_for_training in (
            InputPipelineConfig.PER_HOST_V2, InputPipelineConfig.BROADCAST) else _cores_per_host(master)
        if per_host and cores > per_host:
            prefix = ("Except the PER_HOST_V2 mode, the num of cores required by model parallelism specified by "
                      "TPUConfig.num_cores_per_replica should be less than or equal to the num_cores_per_host. "
                      f"num_cores_per_replica: {cores}, num_cores_per_host: {per_host}. ")
        raise ValueError(
            f"{prefix}num_cores_per_replica={cores} (model parallelism) is not supported: every replica runs on one "
            "core. Shard a model over cores with keras.distribution (ModelParallel) instead, or leave it None."
        )
    if tpu_config.input_partition_dims is not None:
        raise ValueError("input_partition_dims (spatial partitioning across the cores of a replica) is not "
                         "supported: every replica runs on one core. Leave it None.")


def _cores_per_host(master: str | None) -> int:
    """TPU cores per host of the system at `master`, as TensorFlow's TPU system query reports it (0: no TPU, or
    not asked: use_tpu=False)."""
    if master is None:
        return 0
    from tensorflow.python.tpu import tpu_system_metadata

    try:
        return int(tpu_system_metadata._query_tpu_system_metadata(
            master, cluster_def=None, query_topology=False).num_of_cores_per_host)
    except (tf.errors.OpError, RuntimeError, ValueError):
        return 0


def _check_batch_axis(batch_axis: Any, pipeline: int) -> None:
    """2.15 split PER_HOST_V1 batches along batch_axis and ignored it otherwise; only axis 0 is split here."""
    if batch_axis is None or all(axis == 0 for axis in tf.nest.flatten(batch_axis)):
        return
    if pipeline == InputPipelineConfig.PER_HOST_V1:
        raise ValueError(f"batch_axis={batch_axis!r} is not supported: host batches are split along their first "
                         "axis. Put the batch first in input_fn's tensors, or leave batch_axis None.")
    log_ignored("TPUEstimator(batch_axis=...)", f"per_host_input_for_training={pipeline_name(pipeline)} gives "
                "input_fn per-replica batches, which are not split (2.15 ignored it there too).")

