"""Everything tied to one tf.distribute.Strategy: its variables, global step and compiled loops."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.checkpoint import checkpoints
from estimators.distribute.strategy import is_tpu_strategy, spans_workers
from estimators.mode_keys import ModeKeys
from estimators.runtime.steps import ModelFnSteps, check_metrics
from estimators.runtime.variable_store import VariableStore
from estimators.training import loops

METRICS_KEY = "eval_metrics"


class Runtime:
    """One strategy's variable store, engine-owned global step, and cached loop functions."""

    def __init__(self, strategy: tf.distribute.Strategy, model_fn: Callable, params: dict, config: Any,
                 static_shapes: bool):
        self.strategy = strategy
        self.store = VariableStore()
        self.num_replicas = strategy.num_replicas_in_sync
        with strategy.scope():
            self.global_step = tf.Variable(
                0, dtype=tf.int64, trainable=False, name=checkpoints.GLOBAL_STEP,
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
            )
        jit_compile = bool(getattr(config, "jit_compile", False)) and not is_tpu_strategy(strategy)
        if jit_compile and self.num_replicas > 1:
            raise ValueError(
                f"RunConfig(jit_compile=True) runs on one replica, not {self.num_replicas}: XLA cannot place "
                "MirroredStrategy replicas' compiled steps on their own devices. Check TPU compatibility "
                "with one device (no train_distribute); on a TPU every step is compiled anyway."
            )
        self.steps = ModelFnSteps(model_fn, params, config, self.store, self.num_replicas, static_shapes,
                                  jit_compile=jit_compile)
        self._loops: dict[tuple, Callable] = {}
        self._iterations_per_loop = config.tpu_config.iterations_per_loop
        self._host_metrics: Callable | None = None
        self.host_metric_objects: dict = {}
        self._train_input: tuple[Callable, Any] | None = None
        self._barrier: Callable | None = None

    def loop(self, mode: str, batch_size: int | None) -> Callable:
        """The compiled loop for `mode`, made once per batch size and reused across calls."""
        key = (mode, batch_size)
        if key not in self._loops:
            if mode == ModeKeys.TRAIN:
                make = loops.SingleStepLoop if self._iterations_per_loop == 1 else loops.train_loop
                self._loops[key] = make(self.strategy, self.steps.train(batch_size), self.global_step)
            elif mode == ModeKeys.EVAL:
                self._loops[key] = loops.inference_loop(self.strategy, self.steps.evaluate(batch_size))
            else:
                self._loops[key] = loops.inference_loop(self.strategy, self.steps.predict(batch_size))
        return self._loops[key]

    def barrier(self) -> None:
        """Waits until every worker gets here (a no-op within one process)."""
        if not spans_workers(self.strategy):
            return
        if self._barrier is None:
            self._barrier = tf.function(
                lambda: self.strategy.reduce(
                    tf.distribute.ReduceOp.SUM, self.strategy.run(lambda: tf.constant(1.0)), axis=None))
        self._barrier()

    def train_iterator(self, input_fn: Callable, make: Callable[[], Any]) -> Any:
        """The training iterator for input_fn, kept across train() calls with the same input_fn.

        Successive train() calls then continue the same data stream (as one long call would), skip
        refilling shuffle buffers, and never destroy an iterator whose tf.data threads are busy.
        """
        if self._train_input is None or self._train_input[0] is not input_fn:
            self._train_input = (input_fn, make())
        return self._train_input[1]

    def metric_objects(self) -> dict:
        """The Keras metrics of the latest evaluation trace: model_fn's own and metric_fn's."""
        return {**(self.steps.last.metric_objects or {}), **self.host_metric_objects}

    def update_host_metrics(self, rows: Any, mask: tf.Tensor) -> None:
        """Runs TPUEstimatorSpec's metric_fn on the real rows of a finished eval loop (on the host)."""
        metric_fn = self.steps.last.metric_fn
        if metric_fn is None:
            return
        if self._host_metrics is None:
            self._host_metrics = tf.function(self._metric_fn_call)
        self._host_metrics(rows, mask)

    def _metric_fn_call(self, rows: Any, mask: tf.Tensor) -> None:
        real = tf.nest.map_structure(lambda t: tf.boolean_mask(t, mask), rows)
        metric_fn = self.steps.last.metric_fn
        with self.store.scope(METRICS_KEY, share=False):
            metrics = metric_fn(**real) if isinstance(real, dict) else metric_fn(*real)
        self.host_metric_objects = check_metrics(metrics)

    def checkpoint(self, include_optimizer: bool = True) -> tf.train.Checkpoint:
        """A tf.train.Checkpoint over the global step and every model variable created so far.

        Metric state is never saved; include_optimizer=False leaves out optimizer state too
        (what warm-starting copies is the model alone).
        """
        owners = list(self.metric_objects().values())
        if not include_optimizer:
            owners += [opt.optimizer for opt in self.steps.optimizers]
        exclude = {id(getattr(var, "value", var)) for owner in owners for var in owner.variables}
        return checkpoints.make_checkpoint(checkpoints.keyed_variables(self.store, exclude), self.global_step)
