"""Everything tied to one tf.distribute.Strategy: its variables, global step and compiled loops."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from estimators.compat.call_context import ModelFnCall, entered
from estimators.distribute.strategy import is_tpu_strategy, spans_workers
from estimators.mode_keys import ModeKeys
from estimators.runtime import naming
from estimators.runtime.steps import ModelFnSteps, StepTrace, check_metrics
from estimators.runtime.variable_store import GLOBAL_STEP, MODEL, OPTIMIZER, STEP, VariableStore
from estimators.training.iterations import IterationsPerLoop
from estimators.training.loops import InferenceLoop, TrainLoop
from estimators.training.step_summaries import StepSummaries


class Runtime:
    """One strategy's variable store, engine-owned global step, and cached loop functions."""

    def __init__(self, strategy: tf.distribute.Strategy, model_fn: Callable, params: dict, config: Any,
                 static_shapes: bool, params_for_model_fn: Callable | None = None):
        self.strategy = strategy
        self.num_replicas = strategy.num_replicas_in_sync
        with strategy.scope():
            self.global_step = tf.Variable(
                0, dtype=tf.int64, trainable=False, name=GLOBAL_STEP,
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
            )
        self.store = VariableStore(self.global_step)
        jit_compile = bool(getattr(config, "jit_compile", False)) and not is_tpu_strategy(strategy)
        if jit_compile and self.num_replicas > 1:
            raise ValueError(
                f"RunConfig(jit_compile=True) runs on one replica, not {self.num_replicas}: XLA cannot place "
                "MirroredStrategy replicas' compiled steps on their own devices. Check TPU compatibility "
                "with one device (no train_distribute); on a TPU every step is compiled anyway."
            )
        self.steps = ModelFnSteps(model_fn, params, config, self.num_replicas, static_shapes, self.global_step,
                                  self.store.creator_scope, jit_compile=jit_compile,
                                  params_for_model_fn=params_for_model_fn)
        self._single_step = IterationsPerLoop(config.tpu_config.iterations_per_loop).single_step
        self._loops: dict[tuple, tuple[Any, StepTrace]] = {}
        self._host_metrics: Callable | None = None
        self.host_metric_objects: dict = {}
        self._barrier: Callable | None = None
        self._vote: Callable | None = None

    @contextlib.contextmanager
    def step_scope(self, mode: str) -> Iterator[None]:
        """What every strategy.run of a `mode` step runs inside (also its cross-replica merge_calls)."""
        with self.store.creator_scope(mode), self.strategy._scale_loss_for_estimator_enabled():  # noqa: SLF001
            yield

    def train_loop(self, batch_size: int | None, stop: tf.Variable,
                   summaries: StepSummaries | None = None) -> tuple[TrainLoop, StepTrace]:
        """The compiled training loop for this batch size (made once, reused across train() calls) and its trace."""
        key = (ModeKeys.TRAIN, batch_size)
        if key not in self._loops:
            step, trace = self.steps.train(batch_size)
            loop = TrainLoop(self.strategy, step, lambda: self.step_scope(ModeKeys.TRAIN), self._single_step, stop,
                             summaries, has_optimizer=lambda: bool(trace.optimizers))
            self._loops[key] = (loop, trace)
        return self._loops[key]

    def any_worker(self, vote: bool) -> bool:
        """True when any worker votes True (a collective across workers; the vote itself within one)."""
        if not spans_workers(self.strategy):
            return vote
        if self._vote is None:
            self._vote = tf.function(
                lambda v: self.strategy.reduce(tf.distribute.ReduceOp.SUM, self.strategy.run(lambda: v), axis=None))
        return bool(self._vote(tf.constant(float(vote))) > 0)

    def inference_loop(self, mode: str, batch_size: int | None) -> tuple[InferenceLoop, StepTrace]:
        """The compiled eval or predict loop for this batch size, and what tracing its step learned."""
        key = (mode, batch_size)
        if key not in self._loops:
            step, trace = (self.steps.evaluate if mode == ModeKeys.EVAL else self.steps.predict)(batch_size)
            self._loops[key] = (InferenceLoop(self.strategy, step, lambda: self.step_scope(mode)), trace)
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

    def metric_objects(self, trace: StepTrace) -> dict:
        """The Keras metrics of an evaluation: those model_fn updated, and metric_fn's."""
        return {**trace.metric_objects, **self.host_metric_objects}

    def update_host_metrics(self, trace: StepTrace, rows: Any, mask: tf.Tensor) -> None:
        """Runs TPUEstimatorSpec's metric_fn on the real rows of a finished eval loop (on the host)."""
        if trace.metric_fn is None:
            return
        if self._host_metrics is None:
            self._host_metrics = tf.function(self._metric_fn_call)
        self._host_metrics(trace.metric_fn, rows, mask)

    def _metric_fn_call(self, metric_fn: Callable, rows: Any, mask: tf.Tensor) -> None:
        real = tf.nest.map_structure(lambda t: tf.boolean_mask(t, mask), rows)
        call = ModelFnCall(ModeKeys.EVAL, 1)
        with self.store.creator_scope(ModeKeys.EVAL), entered(call), naming.call_names() as names:
            call.names = names
            metrics = metric_fn(**real) if isinstance(real, dict) else metric_fn(*real)
        self.host_metric_objects = check_metrics(metrics)

    def saved_variables(self) -> dict:
        """{TF1 name: variable} of everything a checkpoint holds: global step, model and optimizer state."""
        return self.store.variables((STEP, MODEL, OPTIMIZER))

    def model_variables(self) -> dict:
        """{TF1 name: variable} that inference needs: the global step and the model's own weights."""
        return self.store.variables((STEP, MODEL))
