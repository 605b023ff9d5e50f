"""Where each mode of an Estimator runs and what its input_fn and model_fn see: the strategy per mode, the
batch sizes, the input pipeline and the params, as one object both execution paths read.

A plain Estimator's deployment is tf.estimator 2.15's: train_distribute / eval_distribute (or TF_CONFIG's
workers, or the local devices), input_fn batching its own data, params passed unchanged. TPUEstimator's
(estimators/tpu/deployment.py) adds the global batch, per-core params and the TPU input pipelines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

from estimators.compat.input_fn_call import call_input_fn
from estimators.distribute.inputs import masked_stream
from estimators.distribute.strategy import (
    graph_replication_unsupported,
    is_tpu_strategy,
    local_replicas,
    multi_worker_strategy,
    resolve_strategy,
)
from estimators.mode_keys import ModeKeys

_TPU_STRATEGY_REFUSED = (
    "A plain Estimator cannot run on a TPUStrategy: its input_fn batches the global batch, which tf.distribute "
    "may split unevenly (dynamic shapes a TPU recompiles or rejects). Use estimators.TPUEstimator(..., "
    "use_tpu=True, train_batch_size=...), whose input_fn gets params['batch_size'] per core.")


def master_with_workers(config: Any) -> bool:
    """Whether TF_CONFIG's cluster has a 'master' job and 'worker' tasks: 2.15's between-graph training, which
    MultiWorkerMirroredStrategy cannot run (it refuses a 'master' job)."""
    jobs = config.cluster_spec.jobs
    return "master" in jobs and "worker" in jobs


class Deployment:
    """A plain Estimator's deployment (tf.estimator 2.15's): strategies from RunConfig, input_fn's own batches."""

    use_tpu = False
    static_shapes = False  # programs built with static shapes (a TPU's): TPUEstimator's
    whole_steps_only = False  # train(steps=12.5) is 13 steps; TPUEstimator refuses a float

    def __init__(self, config: Any, params: Mapping):
        self._config = config
        self._params = dict(params)
        self._strategies: dict[str, tf.distribute.Strategy] = {}
        if config.train_distribute is None and not self.use_tpu and not master_with_workers(config):
            # Before any TensorFlow op: collectives can only be configured at program start.
            workers = multi_worker_strategy()
            if workers is not None:
                self._strategies[ModeKeys.TRAIN] = workers

    def made_strategies(self) -> list[tf.distribute.Strategy]:
        """The strategies made so far (TF_CONFIG's workers from the start)."""
        return list(self._strategies.values())

    # -- the TF2 path -------------------------------------------------------------------------------------------
    def strategy(self, mode: str) -> tf.distribute.Strategy:
        """The strategy for `mode`, made once: eval and predict share train's unless eval_distribute is set."""
        key = ModeKeys.TRAIN if mode == ModeKeys.TRAIN or self._config.eval_distribute is None else ModeKeys.EVAL
        if key not in self._strategies:
            config = self._config
            configured = config.train_distribute if key == ModeKeys.TRAIN else config.eval_distribute
            strategy = resolve_strategy(False, configured, config.cluster, config.master, num_gpus=config.num_gpus)
            if is_tpu_strategy(strategy):
                raise ValueError(_TPU_STRATEGY_REFUSED)
            self._strategies[key] = strategy
        return self._strategies[key]

    def global_batch_size(self, mode: str) -> int | None:
        """The global batch for `mode`, or None when input_fn decides it (a plain Estimator)."""
        return None

    def model_fn_batch_size(self, mode: str, strategy: tf.distribute.Strategy) -> int | None:
        """The per-replica batch model_fn is built for, or None when input_fn decides it."""
        return None

    def input_params(self) -> dict:
        """input_fn's params: the Estimator's, unchanged."""
        return dict(self._params)

    def params_for_model_fn(self, params: dict, batch_size: int | None) -> dict:
        """The params dict model_fn receives inside a replica (tf.estimator passes its params unchanged)."""
        return dict(params)

    def export_params(self) -> dict:
        """model_fn's params in a TF2 export."""
        return dict(self._params)

    def check_export(self) -> None:
        """What this deployment cannot export, refused before anything is written (nothing, here)."""

    def input_elements_per_step(self, strategy: tf.distribute.Strategy) -> int:
        """Elements one step takes from this worker's input pipeline: one batch per local replica."""
        return local_replicas(strategy)

    def distributed_dataset(self, strategy: tf.distribute.Strategy, input_fn: Callable, mode: str) -> Any:
        """input_fn's dataset once per worker (with its InputContext), each replica taking its own batch from it,
        as tf.estimator 2.15 fed train_distribute/eval_distribute replicas (the global batch is batch x replicas)."""

        def dataset_fn(input_context: tf.distribute.InputContext) -> tf.data.Dataset:
            dataset = call_input_fn(input_fn, mode=mode, params=self.input_params(), config=self._config,
                                    input_context=input_context)
            if mode != ModeKeys.TRAIN:
                dataset = masked_stream(dataset, batch_size=0, static=False, split_partial=False)
            return dataset

        return strategy.distribute_datasets_from_function(dataset_fn)

    # -- the graph path -----------------------------------------------------------------------------------------
    def check_graph_path(self) -> None:
        """What the graph path cannot run, refused with the way out."""
        config = self._config
        for strategy in [config.train_distribute, config.eval_distribute, *self._strategies.values()]:
            why = graph_replication_unsupported(strategy)
            if why is not None:
                raise ValueError(
                    "This model_fn needs the graph path (tf.Graph and sessions: Scaffolds, SessionRunHooks, "
                    f"init_from_checkpoint or eager execution disabled), which cannot replicate it with {why}. "
                    "Use MirroredStrategy, drop train_distribute/eval_distribute (or TF_CONFIG's workers), or write "
                    "model_fn for the TF2 path.")

    def graph_strategy(self, mode: str) -> tf.distribute.Strategy | None:
        """The strategy the graph path replicates `mode` with, as tf.estimator 2.15: train_distribute for TRAIN,
        eval_distribute (never train's) for EVAL, none for PREDICT and exports."""
        return {ModeKeys.TRAIN: self._config.train_distribute, ModeKeys.EVAL: self._config.eval_distribute}.get(mode)

    def graph_input_params(self, mode: str) -> dict:
        """input_fn's params on the graph path (one device): tf.estimator passes its params unchanged."""
        return self.input_params()

    def graph_model_fn_params(self, mode: str, export: bool = False) -> dict:
        """model_fn's params on the graph path (one device; `export`: in the serving graph)."""
        return dict(self._params)

    def graph_model_fn(self, model_fn: Callable) -> Callable:
        """The model_fn the graph path calls."""
        return model_fn

    def graph_labels_in_predict(self) -> bool:
        """Whether the graph path's predict() passes input_fn's labels to model_fn (2.15 dropped them off a TPU)."""
        return False
