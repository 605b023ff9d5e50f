"""Everything tied to one tf.distribute.Strategy: its variables, global step and compiled loops."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from estimators.compat import (
    guards,  # noqa: F401 - registers the engine's guards before any call
    write_guard,
)
from estimators.compat.call_context import ModelFnCall, entered
from estimators.compat.collections import call_collections
from estimators.compat.metrics import V1MetricResult, pair_values, reset_local_variable
from estimators.distribute.strategy import is_chief, is_tpu_strategy, spans_workers
from estimators.mode_keys import ModeKeys
from estimators.tf2 import naming
from estimators.tf2.steps import ModelFnSteps, StepTrace, check_metrics
from estimators.tf2.variable_store import GLOBAL_STEP, MODEL, OPTIMIZER, STEP, VariableStore
from estimators.training.iterations import IterationsPerLoop
from estimators.training.logging_hook import StepFetches
from estimators.training.loops import HostCall, InferenceLoop, TrainLoop, engine_checks_unwrapped
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
        write_guard.guard(self.global_step, global_step=True)  # a hand-written gs.assign_add(1) runs in TRAIN only
        self.store = VariableStore(self.global_step)
        jit_compile = bool(getattr(config, "jit_compile", False)) and not is_tpu_strategy(strategy)
        if jit_compile and self.num_replicas > 1:
            raise ValueError(
                f"RunConfig(jit_compile=True) runs on one replica, not {self.num_replicas}: XLA cannot place "
                "MirroredStrategy replicas' compiled steps on their own devices. Check TPU compatibility "
                "with one device (no train_distribute); on a TPU every step is compiled anyway."
            )
        self.steps = ModelFnSteps(model_fn, params, config, self.num_replicas, static_shapes, self.global_step,
                                  self.store, jit_compile=jit_compile,
                                  params_for_model_fn=params_for_model_fn)
        self._single_step = IterationsPerLoop(config.tpu_config.iterations_per_loop).single_step
        self._host_call_every = getattr(config.tpu_config, "experimental_host_call_every_n_steps", 1)
        self._loops: dict[tuple, tuple[Any, StepTrace]] = {}
        self._host_metrics: Callable | None = None
        self._host_values: Callable | None = None
        self._host_values_now: dict | None = None
        self._host_pairs: list[str] = []
        self._step_values: dict[tuple, Callable] = {}
        self._eval_element: Any = None  # an element of the running evaluation (remember_eval_element)
        self.host_metric_objects: dict = {}
        self._barrier: Callable | None = None
        self._vote: Callable | None = None

    @contextlib.contextmanager
    def step_scope(self, mode: str) -> Iterator[None]:
        """What every strategy.run of a `mode` step runs inside (also its cross-replica merge_calls)."""
        with self.store.creator_scope(mode), self.strategy._scale_loss_for_estimator_enabled():  # noqa: SLF001
            yield

    def train_loop(self, batch_size: int | None, stop: tf.Variable, summaries: StepSummaries | None = None,
                   fetch_names: tuple = ()) -> tuple[TrainLoop, StepTrace]:
        """The compiled training loop for this batch size and the tensors train()'s hooks log (made once,
        reused across train() calls), and its trace."""
        key = (ModeKeys.TRAIN, batch_size, fetch_names)
        if key not in self._loops:
            step, trace = self.steps.train(batch_size, fetch_names)
            calls = HostCall(lambda: trace.host_call_fn, self.global_step, here=is_chief(self.strategy),
                             every=self._host_call_every)
            loop = TrainLoop(self.strategy, step, lambda: self.step_scope(ModeKeys.TRAIN), self._single_step, stop,
                             summaries, writes_learning_rate=lambda: trace.writes_learning_rate, host_call=calls,
                             fetches=StepFetches())
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

    def inference_loop(self, mode: str, batch_size: int | None,
                       stop: tf.Variable | None = None) -> tuple[InferenceLoop, StepTrace]:
        """The compiled eval or predict loop for this batch size, and what tracing its step learned; an
        evaluation loop within one worker reads `stop` before every batch (across workers, they would part)."""
        key = (mode, batch_size)
        if key not in self._loops:
            step, trace = (self.steps.evaluate if mode == ModeKeys.EVAL else self.steps.predict)(batch_size)
            calls = HostCall(lambda: trace.host_call_fn, self.global_step, here=is_chief(self.strategy))
            reads = stop if mode == ModeKeys.EVAL and not spans_workers(self.strategy) else None
            self._loops[key] = (InferenceLoop(self.strategy, step, lambda: self.step_scope(mode), calls, reads),
                                trace)
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
        """An evaluation's metrics, each with reset_state() and result(): model_fn's and metric_fn's.

        Keras metrics as they are; tf.compat.v1 (value, update_op) pairs as V1MetricResult, whose
        result() reads the value after the last batch and whose reset_state() puts TF1 local
        variables back to their initial values (tf.estimator initialised them for every evaluation).
        """
        objects = dict(trace.metric_objects)
        for name in trace.metric_pairs:
            objects[name] = V1MetricResult(name, functools.partial(self._read_step_values, trace),
                                           self.reset_tf1_local_variables)
        objects.update(self.host_metric_objects)
        for name in self._host_pairs:
            objects[name] = V1MetricResult(name, self._last_host_values, self.reset_tf1_local_variables)
        return objects

    def reset_tf1_local_variables(self) -> None:
        """Every TF1 local / metric variable back to its initial value (one evaluation's fresh start)."""
        self._host_values_now = None
        with self.strategy.scope():
            for stored in self.store.tf1_local_variables():
                reset_local_variable(stored.variable, stored.initial)

    def remember_eval_element(self, element: Any) -> None:
        """An element of the running evaluation: the input of the read-only call that reads v1 metric values."""
        self._eval_element = element

    def _read_step_values(self, trace: StepTrace) -> dict:
        """eval_metric_ops' v1 values now: model_fn once more, in every replica, pruned to the values."""
        flat = tf.nest.flatten(self._eval_element, expand_composites=True)
        key = (id(trace), tuple((tuple(t.shape), t.dtype) for t in flat))
        if key not in self._step_values:
            self._step_values[key] = self._values_only(trace, self._eval_element, flat)
        with self.strategy.scope():
            return {name: tf.nest.map_structure(lambda v: v.numpy(), value)
                    for name, value in self._step_values[key](*flat).items()}

    def _values_only(self, trace: StepTrace, element: Any, flat: list[tf.Tensor]) -> Callable:
        """The read-only call as a session ran it: only what the metric values need runs.

        model_fn is built once more around strategy.run in a v1 graph (tf.compat.v1.wrap_function: no automatic
        control dependencies), which is then pruned to the values. Its writes (metric updates, a train_op built in
        every mode, scatter updates, global-step increments) are not in the values' closure, so none of them runs,
        whatever order the values were built in; a value that depends on a write (an EMA it reads) runs it, as the
        session did.
        """
        step = self.steps.metric_values(self._batch_size_of(trace), trace)
        feeds: list[tf.Tensor] = []

        def build(*placeholders: tf.Tensor) -> dict:
            feeds.extend(placeholders)
            # tf_keras builds its Keras 1 graph layers in a graph named "wrapped_function*" (its
            # version_utils.should_use_v2); model_fn's other calls built TF2 layers, so this one does too.
            tf.compat.v1.get_default_graph().name = "metric_values"
            replicated = tf.nest.pack_sequence_as(element, list(placeholders), expand_composites=True)
            with self.step_scope(ModeKeys.EVAL):
                values = self.strategy.run(step, args=(replicated,))
            return {name: tf.nest.map_structure(lambda v: self.strategy.experimental_local_results(v)[0], value)
                    for name, value in values.items()}

        with self.strategy.scope():
            wrapped = tf.compat.v1.wrap_function(build, [tf.TensorSpec(t.shape, t.dtype) for t in flat])
        # Values fed when the function runs (MultiWorkerMirroredStrategy's collective instance keys) are inputs
        # too: the pruned function is given them at each call, as tf.function gives its own call-time captures.
        graph = wrapped.graph
        at_call = list(graph.deferred_external_captures)
        pruned = wrapped.prune([*feeds, *graph.deferred_internal_captures], wrapped.structured_outputs)
        return lambda *components: pruned(*components, *tf.nest.flatten([capture() for capture in at_call]))

    def _batch_size_of(self, trace: StepTrace) -> int | None:
        for (_mode, batch_size, *_), (_, known) in self._loops.items():
            if known is trace:
                return batch_size
        return None

    def update_host_metrics(self, trace: StepTrace, rows: Any, mask: tf.Tensor) -> None:
        """Runs TPUEstimatorSpec's metric_fn on the real rows of a finished eval loop (on the host)."""
        if trace.metric_fn is None:
            return
        if self._host_metrics is None:
            self._host_metrics = tf.function(self._metric_fn_call, reduce_retracing=True)  # row counts vary
        with engine_checks_unwrapped():
            self._host_metrics(trace.metric_fn, rows, mask)
        if self._host_pairs:  # read here, on the host, outside the strategy's scope where metric_fn ran
            empty = tf.nest.map_structure(lambda t: t[:0], rows)
            self._host_values_now = self._read_host_values(trace.metric_fn, empty)

    def _call_metric_fn(self, metric_fn: Callable, rows: Any) -> Any:
        call = ModelFnCall(ModeKeys.EVAL, 1)
        with self.store.creator_scope(ModeKeys.EVAL), entered(call), naming.call_names() as names, \
                call_collections(self.global_step) as collections:
            call.names, call.collections = names, collections
            return metric_fn(**rows) if isinstance(rows, dict) else metric_fn(*rows)

    def _metric_fn_call(self, metric_fn: Callable, rows: Any, mask: tf.Tensor) -> None:
        real = tf.nest.map_structure(lambda t: tf.boolean_mask(t, mask), rows)
        self.host_metric_objects, self._host_pairs = check_metrics(self._call_metric_fn(metric_fn, real))

    def _read_host_values(self, metric_fn: Callable, empty_rows: Any) -> dict:
        """metric_fn's v1 values now: metric_fn once more on zero rows (its updates add nothing)."""
        if self._host_values is None:
            def read(metric_fn, rows):
                return pair_values(self._call_metric_fn(metric_fn, rows), self._host_pairs)

            self._host_values = tf.function(read, autograph=False)
        return {name: value.numpy() for name, value in self._host_values(metric_fn, empty_rows).items()}

    def _last_host_values(self) -> dict:
        if self._host_values_now is None:
            raise ValueError("No evaluation has run metric_fn since the metrics were reset: no values to read.")
        return self._host_values_now

    def saved_variables(self) -> dict:
        """{TF1 name: variable} of everything a checkpoint holds: global step, model and optimizer state."""
        return self.store.variables((STEP, MODEL, OPTIMIZER))

    def model_variables(self) -> dict:
        """{TF1 name: variable} that inference needs: the global step and the model's own weights."""
        return self.store.variables((STEP, MODEL))
