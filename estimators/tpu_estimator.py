"""TPUEstimator: global batch sizes split per replica, per-pipeline input, static-shape programs."""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from estimators.distribute.inputs import make_dataset_fn, per_replica_batch_size
from estimators.distribute.strategy import local_strategy
from estimators.estimator import Estimator
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig
from estimators.runtime.state import Runtime

_BATCH_ARGS = {ModeKeys.TRAIN: "train_batch_size", ModeKeys.EVAL: "eval_batch_size",
               ModeKeys.PREDICT: "predict_batch_size"}


class TPUEstimator(Estimator):
    """Estimator with TPUEstimator's contract: input_fn(params) gets the per-replica batch.

    Runs on a TPU with use_tpu=True, else on local GPUs/CPU (or the configured strategy), always
    with static shapes, so a model that runs here compiles for a TPU.
    """

    _static_shapes = True

    def __init__(self, model_fn: Callable | None = None, model_dir: str | None = None,
                 config: RunConfig | None = None, params: dict | None = None, use_tpu: bool = True,
                 train_batch_size: int | None = None, eval_batch_size: int | None = None,
                 predict_batch_size: int | None = None, batch_axis=None, eval_on_tpu: bool = True,
                 export_to_tpu: bool = True, export_to_cpu: bool = True, warm_start_from: str | None = None,
                 embedding_config_spec=None, export_saved_model_api_version=None):
        if params and "batch_size" in params:
            raise ValueError(
                "params['batch_size'] is reserved: TPUEstimator sets it to the per-replica batch. "
                "Pass train_batch_size/eval_batch_size/predict_batch_size instead."
            )
        if embedding_config_spec is not None:
            raise ValueError("embedding_config_spec (TPU embeddings) is not supported; use keras_rs instead.")
        if batch_axis is not None:
            raise ValueError("batch_axis is not supported: batches are split along their first dimension.")
        self._use_tpu = bool(use_tpu)
        super().__init__(model_fn, model_dir=model_dir, config=config, params=params, warm_start_from=warm_start_from)
        self._eval_on_tpu = bool(eval_on_tpu)
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        for mode, size in self._batch_sizes.items():
            if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
                raise ValueError(f"{_BATCH_ARGS[mode]} must be a positive integer, got {size!r}.")

    def _strategy(self, mode: str) -> tf.distribute.Strategy:
        if mode != ModeKeys.TRAIN and self._use_tpu and not self._eval_on_tpu and self._config.eval_distribute is None:
            return self._strategies.setdefault("cpu_eval", local_strategy())
        return super()._strategy(mode)

    def _params_for_model_fn(self, params: dict, batch_size: int | None) -> dict:
        """TPUEstimator's model_fn params: the per-replica params['batch_size'] and params['use_tpu']."""
        params = dict(params, use_tpu=self._use_tpu)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def _input_elements_per_step(self, runtime: Runtime) -> int:
        """Each step takes one per-replica batch per local replica from this host's input pipeline."""
        extended = runtime.strategy.extended
        per_host = getattr(extended, "num_replicas_per_host", None)  # TPUStrategy: worker_devices spans all hosts
        if per_host:
            return int(per_host)
        try:
            return len(extended.worker_devices)  # Mirrored / MultiWorkerMirrored: this worker's devices
        except RuntimeError:  # the default strategy: one replica
            return 1

    def _global_batch_size(self, mode: str) -> int | None:
        size = self._batch_sizes[mode]
        if size is None:
            raise ValueError(f"TPUEstimator needs {_BATCH_ARGS[mode]} to {mode_verb(mode)}; pass it to TPUEstimator().")
        return size

    def _model_fn_batch_size(self, mode: str, runtime: Runtime) -> int:
        return per_replica_batch_size(self._global_batch_size(mode), runtime.num_replicas, _BATCH_ARGS[mode])

    def _distributed_dataset(self, runtime: Runtime, input_fn: Callable, mode: str):
        batch_size = self._model_fn_batch_size(mode, runtime)

        dataset_fn = make_dataset_fn(input_fn, self._input_params(), self._config, batch_size, mode, static=True)
        return runtime.strategy.distribute_datasets_from_function(dataset_fn)


def mode_verb(mode: str) -> str:
    return {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate", ModeKeys.PREDICT: "predict"}[mode]
