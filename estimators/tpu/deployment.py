"""TPUEstimator's deployment: TPUEstimator 2.15's strategies per mode (eval_on_tpu, evaluation_master), the
global batch split per core, the TPU input pipelines, and the params model_fn and input_fn see.

model_fn gets params['batch_size'] (per replica), params['use_tpu'] (whether this call runs on a TPU) and, on
a TPU, params['context'] (a TPUContext); input_fn gets params['batch_size'] as the input deployment says (the
host batch by default, PER_HOST_V1) and params['context'], never 'use_tpu'.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

from estimators.compat.fn_args import bound_model_fn, model_fn_args
from estimators.compat.ignored_settings import log_ignored
from estimators.compat.tpu_context import TPUContext
from estimators.distribute.deployment import Deployment
from estimators.distribute.input_pipeline import InputPipelineConfig
from estimators.distribute.inputs import InputDeployment, make_dataset_fn, per_replica_batch_size
from estimators.distribute.strategy import local_replicas, local_strategy, num_input_hosts, resolve_strategy
from estimators.mode_keys import ModeKeys
from estimators.specs import EstimatorSpec

BATCH_ARGS = {ModeKeys.TRAIN: "train_batch_size", ModeKeys.EVAL: "eval_batch_size",
              ModeKeys.PREDICT: "predict_batch_size"}
_CPU_EVAL, _TPU_EVAL = "cpu_eval", "tpu_eval"


class TPUDeployment(Deployment):
    """TPUEstimator 2.15's deployment on a TPU (use_tpu=True) or on local GPUs/CPU (use_tpu=False)."""

    static_shapes = True
    whole_steps_only = True

    def __init__(self, config: Any, params: Mapping, batch_sizes: Mapping[str, int | None], use_tpu: bool,
                 eval_on_tpu: bool, export_to_tpu: bool, export_to_cpu: bool):
        self.use_tpu = use_tpu
        self.eval_on_tpu = eval_on_tpu
        self.batch_sizes = dict(batch_sizes)
        self._export_to_tpu, self._export_to_cpu = export_to_tpu, export_to_cpu
        super().__init__(config, params)

    def running_on_cpu(self, mode: str) -> bool:
        """2.15's rule: off the TPU with use_tpu=False, and for evaluation with eval_on_tpu=False."""
        return not self.use_tpu or (mode == ModeKeys.EVAL and not self.eval_on_tpu)

    # -- the TF2 path -------------------------------------------------------------------------------------------
    def strategy(self, mode: str) -> tf.distribute.Strategy:
        """The strategy for `mode`, made once (evaluation may run elsewhere: eval_on_tpu, eval_distribute,
        evaluation_master); RunConfig.num_gpus picks the local devices."""
        config = self._config
        if mode == ModeKeys.EVAL and self.use_tpu and not self.eval_on_tpu:
            key, make = _CPU_EVAL, lambda: config.eval_distribute or local_strategy(config.num_gpus)
        elif mode != ModeKeys.TRAIN and config.eval_distribute is not None:
            key, make = ModeKeys.EVAL, lambda: config.eval_distribute
        elif (mode == ModeKeys.EVAL and self.use_tpu and config.cluster is None and config.train_distribute is None
              and config.evaluation_master and config.evaluation_master != config.master):  # '': where it trains
            key, make = _TPU_EVAL, lambda: resolve_strategy(True, None, None, config.evaluation_master)
        else:
            key, make = ModeKeys.TRAIN, lambda: resolve_strategy(
                self.use_tpu, config.train_distribute, config.cluster, config.master, num_gpus=config.num_gpus)
        if key not in self._strategies:
            self._strategies[key] = make()
            self._check_num_shards(self._strategies[key], mode)
        return self._strategies[key]

    def _check_num_shards(self, strategy: tf.distribute.Strategy, mode: str) -> None:
        num_shards = self._config.tpu_config.num_shards
        replicas = strategy.num_replicas_in_sync
        if num_shards is None or num_shards == replicas:
            return
        if not self.running_on_cpu(mode):
            raise ValueError(
                f"TPUConfig(num_shards={num_shards}) does not match the {replicas} replicas (TPU cores) this "
                f"{mode} runs on; set num_shards={replicas} or leave it None (it is read from the TPU)."
            )
        log_ignored("TPUConfig(num_shards=...)", f"it is checked only on a TPU; this {mode} runs off the TPU on "
                    f"{replicas} replica(s), not {num_shards}.")

    def unbatched_predict(self, mode: str) -> bool:
        """predict() off the TPU without predict_batch_size: 2.15 required the size only on a TPU (tpu_context.py
        validation) and otherwise ran input_fn's own batches, as a plain Estimator does."""
        return mode == ModeKeys.PREDICT and self.batch_sizes[mode] is None and self.running_on_cpu(mode)

    def global_batch_size(self, mode: str) -> int | None:
        size = self.batch_sizes[mode]
        if size is None and self.unbatched_predict(mode):
            return None
        if size is None:
            raise ValueError(f"{BATCH_ARGS[mode]} in TPUEstimator constructor cannot be `None`: TPUEstimator needs "
                             f"{BATCH_ARGS[mode]} to {mode_verb(mode)}; pass it to TPUEstimator().")
        return size

    def model_fn_batch_size(self, mode: str, strategy: tf.distribute.Strategy) -> int | None:
        if self.unbatched_predict(mode):
            return None
        return per_replica_batch_size(self.global_batch_size(mode), strategy.num_replicas_in_sync, BATCH_ARGS[mode])

    def params_for_model_fn(self, params: dict, batch_size: int | None) -> dict:
        """model_fn's params: per-replica 'batch_size', 'use_tpu' (this call runs on a TPU) and, on a TPU, 'context'.

        Called inside the replica function, so the current strategy is the one running model_fn;
        evaluation with eval_on_tpu=False is the one call off the TPU that use_tpu=True makes.
        """
        strategy = tf.distribute.get_strategy()
        on_cpu = not self.use_tpu or strategy is self._strategies.get(_CPU_EVAL)
        params = dict(params, use_tpu=not on_cpu)
        if not on_cpu:  # 2.15 gave model_fn params['context'] only on the TPU (tpu_estimator.py _call_model_fn)
            params["context"] = TPUContext(num_replicas=strategy.num_replicas_in_sync,
                                           num_hosts=num_input_hosts(strategy), running_on_cpu=False,
                                           from_input_fn=False)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def export_params(self) -> dict:
        """During an export model_fn sees params['use_tpu']=False and no batch size or context (2.15's CPU graph)."""
        return dict(self._params, use_tpu=False)

    def check_export(self) -> None:
        """The CPU serving SavedModel (tag 'serve') is what is written; a TPU-only one is refused."""
        if not self._export_to_cpu:
            raise ValueError(
                "export_to_cpu=False asks for a TPU-only SavedModel, which is not written here (a TF2 SavedModel "
                "serves on TPUs by loading it under TPUStrategy). Set export_to_cpu=True."
            )
        if self._export_to_tpu:
            log_ignored("TPUEstimator(export_to_tpu=True)", "only the CPU serving graph (tag 'serve') is "
                        "exported; 2.15 also wrote a 'serve,tpu' graph. Set export_to_tpu=False to silence this.")

    def input_elements_per_step(self, strategy: tf.distribute.Strategy) -> int:
        """Elements one step takes from each input_fn dataset: one host batch (PER_HOST_V1), one per-replica
        batch per call (PER_SHARD_V1), or one per-replica batch per local replica (PER_HOST_V2)."""
        if self._config.tpu_config.per_host_input_for_training != InputPipelineConfig.PER_HOST_V2:
            return 1
        return local_replicas(strategy)

    def distributed_dataset(self, strategy: tf.distribute.Strategy, input_fn: Callable, mode: str) -> Any:
        if self.unbatched_predict(mode):
            return super().distributed_dataset(strategy, input_fn, mode)
        self.model_fn_batch_size(mode, strategy)  # one clear error when the global batch does not divide
        deployment = InputDeployment.for_mode(self._config.tpu_config, mode, self.running_on_cpu(mode))
        dataset_fn = make_dataset_fn(input_fn, self.input_params(), self._config, self.global_batch_size(mode),
                                     mode, static=True, deployment=deployment)
        return strategy.distribute_datasets_from_function(dataset_fn)

    # -- the graph path -----------------------------------------------------------------------------------------
    def check_graph_path(self) -> None:
        if self.use_tpu:
            return  # refused once the call's graph is built (graph_model_fn below), after 2.15's own checks
        config = self._config
        strategies = [config.train_distribute, config.eval_distribute, *self._strategies.values()]
        if any(s is not None and s.num_replicas_in_sync > 1 for s in strategies):
            raise ValueError(
                "This model_fn needs the graph path (tf.Graph and sessions: a scaffold_fn, SessionRunHooks, "
                "init_from_checkpoint or eager execution disabled), where TPUEstimator(use_tpu=False) runs on one "
                "device, as 2.15 did; the RunConfig asks for several replicas. Drop train_distribute/eval_distribute "
                "(or TF_CONFIG's workers), or write model_fn for the TF2 path.")

    def graph_strategy(self, mode: str) -> None:
        """TPUEstimator off the TPU ran on one device in 2.15: no replication on the graph path."""
        return None

    def _graph_batch_size(self, mode: str) -> int | None:
        """The global batch on the graph path's one device (None: predict() without predict_batch_size)."""
        return None if self.unbatched_predict(mode) else self.global_batch_size(mode)

    def graph_input_params(self, mode: str) -> dict:
        """2.15 off the TPU: input_fn gets the global batch and a context for one CPU replica."""
        params = dict(self.input_params(), context=TPUContext(num_replicas=1, num_hosts=1, running_on_cpu=True,
                                                              from_input_fn=True))
        batch_size = self._graph_batch_size(mode)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def graph_model_fn_params(self, mode: str, export: bool = False) -> dict:
        """2.15 off the TPU: model_fn gets params['batch_size'] = the global batch, and use_tpu False (an export's
        CPU graph: no batch size)."""
        params = dict(self._params, use_tpu=False)
        batch_size = None if export else self._graph_batch_size(mode)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def graph_model_fn(self, model_fn: Callable) -> Callable:
        """model_fn; with use_tpu=True, the one that checks the call as 2.15's TPU model_fn wrapper did and then
        refuses it (refuse_tpu_graph_call)."""
        return functools.partial(refuse_tpu_graph_call, model_fn) if self.use_tpu else model_fn

    def graph_labels_in_predict(self) -> bool:
        return self.use_tpu  # 2.15's TPU predict step checked and kept them


def refuse_tpu_graph_call(model_fn: Callable, features: Any, labels: Any, mode: str, params: dict,
                          config: Any) -> Any:
    """The graph path runs TPUEstimator off the TPU only: with use_tpu=True its call is built as far as 2.15's
    checks of a TPU call go (static input shapes, model_fn's labels and params, the spec's chief hooks and
    static predictions), so their errors come first, and then refused before anything runs."""
    for name, value in (("features", features), ("labels", labels)):
        for tensor in tf.nest.flatten(value) if value is not None else ():
            if isinstance(tensor, tf.Tensor) and not tensor.shape.is_fully_defined():
                raise ValueError(f"The {name} to the model returned by input_fn must have static shape "
                                 f"on a TPU. Tensor: {tensor}. Batch with drop_remainder=True and give every "
                                 f"other dimension a fixed size.")
    args = model_fn_args(model_fn)
    invoke = bound_model_fn(model_fn, args, features, labels, mode, params, config)
    if "params" not in args:
        raise ValueError(f"model_fn ({model_fn!r}) does not include params argument, required by "
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


def mode_verb(mode: str) -> str:
    return {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate", ModeKeys.PREDICT: "predict"}[mode]
