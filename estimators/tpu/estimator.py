"""TPUEstimator: TPUEstimator 2.15's constructor, params and input deployments on tf.distribute.

model_fn gets params['batch_size'] (per replica), params['use_tpu'] (whether this call runs on a
TPU) and params['context'] (a TPUContext); input_fn gets params['batch_size'] as the input
deployment says (the host batch by default, PER_HOST_V1) and params['context'], never 'use_tpu'.
Programs are always built with static shapes, so a model that runs here compiles for a TPU.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from estimators import path_choice
from estimators.compat.fn_args import bound_model_fn, model_fn_args
from estimators.compat.ignored_settings import log_ignored
from estimators.compat.tpu_context import TPUContext
from estimators.compat.tpu_job import TPUJobContext
from estimators.distribute.inputs import InputDeployment, make_dataset_fn, per_replica_batch_size
from estimators.distribute.strategy import local_replicas, local_strategy, num_input_hosts, resolve_strategy
from estimators.estimator import Estimator
from estimators.mode_keys import ModeKeys
from estimators.run_config import InputPipelineConfig, RunConfig, pipeline_name
from estimators.runtime.state import Runtime
from estimators.specs import EstimatorSpec

_BATCH_ARGS = {ModeKeys.TRAIN: "train_batch_size", ModeKeys.EVAL: "eval_batch_size",
               ModeKeys.PREDICT: "predict_batch_size"}
_RESERVED_PARAMS = ("batch_size", "context")
_CPU_EVAL, _TPU_EVAL = "cpu_eval", "tpu_eval"


class ExportSavedModelApiVersion(enum.Enum):
    """TPUEstimator's export_saved_model_api_version (it shaped only the TPU serving graph, not written here)."""

    V1 = 1
    V2 = 2


class TPUEstimator(Estimator):
    """Estimator with TPUEstimator 2.15's contract, on a TPU (use_tpu=True) or local GPUs/CPU.

    With use_tpu=True, training and prediction run on the TPU and evaluation too unless
    eval_on_tpu=False (then on the GPUs RunConfig.num_gpus picks, or the CPU). With use_tpu=False
    everything runs on the configured strategy or local devices.
    """

    _static_shapes = True

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
                raise TypeError(f"`{_BATCH_ARGS[mode]}` must be int (a positive integer), got {size!r} of type "
                                f"{type(size).__name__}.")
            if size is not None and size < 1:
                raise ValueError(f"{_BATCH_ARGS[mode]} must be a positive integer, got {size!r}.")
        if use_tpu and train_batch_size is None:
            raise ValueError("`train_batch_size` cannot be `None`: TPUEstimator(use_tpu=True) needs train_batch_size "
                             "(the global batch).")
        if export_saved_model_api_version not in (1, 2, *ExportSavedModelApiVersion):
            raise ValueError(f"export_saved_model_api_version must be 1 or 2, got {export_saved_model_api_version!r}.")
        self._use_tpu = bool(use_tpu)
        self._eval_on_tpu = bool(eval_on_tpu)
        self._export_to_tpu, self._export_to_cpu = bool(export_to_tpu), bool(export_to_cpu)
        super().__init__(model_fn, model_dir=model_dir, config=config, params=params, warm_start_from=warm_start_from)
        _check_batch_axis(batch_axis, self._config.tpu_config.per_host_input_for_training)
        _check_one_core_per_replica(self._config.tpu_config, self._config.master if self._use_tpu else None)

    def _verify_model_fn_args(self, model_fn: Callable, params: dict | None) -> None:
        """Params are the TPUEstimator's own (it adds batch_size and context), so only the arguments are checked:
        2.15's TPUEstimator wrapped model_fn, whose wrapper always took params."""
        super()._verify_model_fn_args(model_fn, None)

    def _checked_steps(self, name: str, value: Any) -> int | None:
        """TPUEstimator 2.15 took only whole step counts (its loops run whole steps): a float is a TypeError."""
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"{name} must be int, got {value!r} of type {type(value).__name__}: TPUEstimator trains "
                            f"whole steps.")
        return super()._checked_steps(name, value)

    # -- where each mode runs ---------------------------------------------------------------------------
    @property
    def _ctx(self) -> TPUJobContext:
        """2.15's internal context: `with est._ctx.with_mode(mode) as ctx` answers ctx.master_job and the like."""
        return TPUJobContext(self._config, use_tpu=self._use_tpu, eval_on_tpu=self._eval_on_tpu)

    def _running_on_cpu(self, mode: str) -> bool:
        """2.15's rule: off the TPU with use_tpu=False, and for evaluation with eval_on_tpu=False."""
        return not self._use_tpu or (mode == ModeKeys.EVAL and not self._eval_on_tpu)

    def _strategy(self, mode: str) -> tf.distribute.Strategy:
        """The strategy for `mode`, made once (evaluation may run elsewhere: eval_on_tpu, eval_distribute,
        evaluation_master); RunConfig.num_gpus picks the local devices."""
        config = self._config
        if mode == ModeKeys.EVAL and self._use_tpu and not self._eval_on_tpu:
            key, make = _CPU_EVAL, lambda: config.eval_distribute or local_strategy(config.num_gpus)
        elif mode != ModeKeys.TRAIN and config.eval_distribute is not None:
            key, make = ModeKeys.EVAL, lambda: config.eval_distribute
        elif (mode == ModeKeys.EVAL and self._use_tpu and config.cluster is None and config.train_distribute is None
              and config.evaluation_master and config.evaluation_master != config.master):  # '': where it trains
            key, make = _TPU_EVAL, lambda: resolve_strategy(True, None, None, config.evaluation_master)
        else:
            key, make = ModeKeys.TRAIN, lambda: resolve_strategy(
                self._use_tpu, config.train_distribute, config.cluster, config.master, num_gpus=config.num_gpus)
        if key not in self._strategies:
            self._strategies[key] = make()
            self._check_num_shards(self._strategies[key], mode)
        return self._strategies[key]

    def _check_num_shards(self, strategy: tf.distribute.Strategy, mode: str) -> None:
        num_shards = self._config.tpu_config.num_shards
        replicas = strategy.num_replicas_in_sync
        if num_shards is None or num_shards == replicas:
            return
        if not self._running_on_cpu(mode):
            raise ValueError(
                f"TPUConfig(num_shards={num_shards}) does not match the {replicas} replicas (TPU cores) this "
                f"{mode} runs on; set num_shards={replicas} or leave it None (it is read from the TPU)."
            )
        log_ignored("TPUConfig(num_shards=...)", f"it is checked only on a TPU; this {mode} runs off the TPU on "
                    f"{replicas} replica(s), not {num_shards}.")

    # -- params and input ---------------------------------------------------------------------------------
    def _params_for_model_fn(self, params: dict, batch_size: int | None) -> dict:
        """model_fn's params: per-replica 'batch_size', 'use_tpu' (this call runs on a TPU) and, on a TPU, 'context'.

        Called inside the replica function, so the current strategy is the one running model_fn;
        evaluation with eval_on_tpu=False is the one call off the TPU that use_tpu=True makes.
        """
        strategy = tf.distribute.get_strategy()
        on_cpu = not self._use_tpu or strategy is self._strategies.get(_CPU_EVAL)
        params = dict(params, use_tpu=not on_cpu)
        if not on_cpu:  # 2.15 gave model_fn params['context'] only on the TPU (tpu_estimator.py _call_model_fn)
            params["context"] = TPUContext(num_replicas=strategy.num_replicas_in_sync,
                                           num_hosts=num_input_hosts(strategy), running_on_cpu=False,
                                           from_input_fn=False)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def _check_graph_path(self) -> None:
        if self._use_tpu:
            return  # refused once the call's graph is built (model_fn below), after 2.15's own checks
        strategies = [self._config.train_distribute, self._config.eval_distribute, *self._strategies.values()]
        if any(s is not None and s.num_replicas_in_sync > 1 for s in strategies):
            raise ValueError(
                "This model_fn needs the graph path (tf.Graph and sessions: a scaffold_fn, SessionRunHooks, "
                "init_from_checkpoint or eager execution disabled), where TPUEstimator(use_tpu=False) runs on one "
                "device, as 2.15 did; the RunConfig asks for several replicas. Drop train_distribute/eval_distribute "
                "(or TF_CONFIG's workers), or write model_fn for the TF2 path.")

    @property
    def _engine_model_fn(self) -> Callable:
        """model_fn; on the graph path with use_tpu=True, the one that checks the call as 2.15's TPU model_fn
        wrapper did and then refuses it (_refuse_tpu_graph_call)."""
        if self._use_tpu and self._execution == path_choice.GRAPH:
            return self._refuse_tpu_graph_call
        return self._model_fn

    def _refuse_tpu_graph_call(self, features: Any, labels: Any, mode: str, params: dict, config: Any) -> Any:
        """The graph path runs TPUEstimator off the TPU only: with use_tpu=True its call is built as far as 2.15's
        checks of a TPU call go (static input shapes, model_fn's labels and params, the spec's chief hooks and
        static predictions), so their errors come first, and then refused before anything runs."""
        for name, value in (("features", features), ("labels", labels)):
            for tensor in tf.nest.flatten(value) if value is not None else ():
                if isinstance(tensor, tf.Tensor) and not tensor.shape.is_fully_defined():
                    raise ValueError(f"The {name} to the model returned by input_fn must have static shape "
                                     f"on a TPU. Tensor: {tensor}. Batch with drop_remainder=True and give every "
                                     f"other dimension a fixed size.")
        args = model_fn_args(self._model_fn)
        invoke = bound_model_fn(self._model_fn, args, features, labels, mode, params, config)
        if "params" not in args:
            raise ValueError(f"model_fn ({self._model_fn!r}) does not include params argument, required by "
                             f"TPUEstimator to pass batch size as params['batch_size']: add a `params` argument.")
        spec = invoke()
        if isinstance(spec, EstimatorSpec) and spec.training_chief_hooks:
            raise ValueError("training_chief_hooks returned by EstimatorSpec is not supported in TPUEstimator: "
                             "pass training hooks in training_hooks.")
        if mode == ModeKeys.PREDICT and isinstance(getattr(spec, "predictions", None), dict):
            for key, tensor in spec.predictions.items():
                if tf.is_tensor(tensor) and tensor.shape.rank and tf.compat.dimension_value(tensor.shape[0]) is None:
                    raise ValueError(f"The tensor with key ({key}) in TPUEstimatorSpec.predictions has dynamic shape "
                                     f"(should be static) on a TPU. Tensor: {tensor}.")
        raise ValueError(
            "This model_fn needs the graph path (tf.Graph and sessions: a scaffold_fn, SessionRunHooks, "
            "init_from_checkpoint or eager execution disabled), which runs TPUEstimator off the TPU only so far "
            "(use_tpu=False, as 2.15 ran it on a CPU or GPU). On a TPU, write model_fn for the TF2 path.")

    def _graph_strategy(self, mode: str) -> None:
        """TPUEstimator off the TPU ran on one device in 2.15: no replication on the graph path."""
        return None

    def _graph_batch_size(self, mode: str) -> int | None:
        """The global batch on the graph path's one device (None: predict() without predict_batch_size)."""
        return None if self._unbatched_predict(mode) else self._global_batch_size(mode)

    def _graph_input_params(self, mode: str) -> dict:
        """2.15 off the TPU: input_fn gets the global batch and a context for one CPU replica."""
        params = dict(self._input_params(), context=TPUContext(num_replicas=1, num_hosts=1, running_on_cpu=True,
                                                               from_input_fn=True))
        batch_size = self._graph_batch_size(mode)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def _graph_model_fn_params(self, mode: str, export: bool = False) -> dict:
        """2.15 off the TPU: model_fn gets params['batch_size'] = the global batch, and use_tpu False (an export's
        CPU graph: no batch size)."""
        params = dict(self._params, use_tpu=False)
        batch_size = None if export else self._graph_batch_size(mode)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def _input_elements_per_step(self, runtime: Runtime) -> int:
        """Elements one step takes from each input_fn dataset: one host batch (PER_HOST_V1), one per-replica
        batch per call (PER_SHARD_V1), or one per-replica batch per local replica (PER_HOST_V2)."""
        if self._config.tpu_config.per_host_input_for_training != InputPipelineConfig.PER_HOST_V2:
            return 1
        return local_replicas(runtime.strategy)

    def _unbatched_predict(self, mode: str) -> bool:
        """predict() off the TPU without predict_batch_size: 2.15 required the size only on a TPU (tpu_context.py
        validation) and otherwise ran input_fn's own batches, as a plain Estimator does."""
        return mode == ModeKeys.PREDICT and self._batch_sizes[mode] is None and self._running_on_cpu(mode)

    def _global_batch_size(self, mode: str) -> int | None:
        size = self._batch_sizes[mode]
        if size is None and self._unbatched_predict(mode):
            return None
        if size is None:
            raise ValueError(f"{_BATCH_ARGS[mode]} in TPUEstimator constructor cannot be `None`: TPUEstimator needs "
                             f"{_BATCH_ARGS[mode]} to {mode_verb(mode)}; pass it to TPUEstimator().")
        return size

    def _model_fn_batch_size(self, mode: str, runtime: Runtime) -> int | None:
        if self._unbatched_predict(mode):
            return None
        return per_replica_batch_size(self._global_batch_size(mode), runtime.num_replicas, _BATCH_ARGS[mode])

    def _distributed_dataset(self, runtime: Runtime, input_fn: Callable, mode: str):
        if self._unbatched_predict(mode):
            return super()._distributed_dataset(runtime, input_fn, mode)
        self._model_fn_batch_size(mode, runtime)  # one clear error when the global batch does not divide
        deployment = InputDeployment.for_mode(self._config.tpu_config, mode, self._running_on_cpu(mode))
        dataset_fn = make_dataset_fn(input_fn, self._input_params(), self._config, self._global_batch_size(mode),
                                     mode, static=True, deployment=deployment)
        return runtime.strategy.distribute_datasets_from_function(dataset_fn)

    def export_saved_model(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                           assets_extra: dict | None = None, as_text: bool = False,
                           checkpoint_path: str | None = None, experimental_mode: str = ModeKeys.PREDICT) -> bytes:
        """The CPU serving SavedModel (tag 'serve'); model_fn gets params['use_tpu'] False, as 2.15's CPU graph."""
        if not self._export_to_cpu:
            raise ValueError(
                "export_to_cpu=False asks for a TPU-only SavedModel, which is not written here (a TF2 SavedModel "
                "serves on TPUs by loading it under TPUStrategy). Set export_to_cpu=True."
            )
        if self._export_to_tpu:
            log_ignored("TPUEstimator(export_to_tpu=True)", "only the CPU serving graph (tag 'serve') is "
                        "exported; 2.15 also wrote a 'serve,tpu' graph. Set export_to_tpu=False to silence this.")
        with self._export_params():
            return super().export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra,
                                              as_text=as_text, checkpoint_path=checkpoint_path,
                                              experimental_mode=experimental_mode)

    @contextlib.contextmanager
    def _export_params(self) -> Iterator[None]:
        """During an export model_fn sees params['use_tpu']=False and no batch size or context (2.15's CPU graph)."""
        params = self._params
        self._params = dict(params, use_tpu=False)
        try:
            yield
        finally:
            self._params = params


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


def mode_verb(mode: str) -> str:
    return {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate", ModeKeys.PREDICT: "predict"}[mode]
