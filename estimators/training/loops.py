"""Compiled loops: `iterations` steps inside one tf.function call, as TPUEstimator's loops did.

A loop runs strategy.run(step) inside `step_scope()` (the variable store's creator scope and the
strategy's estimator loss scaling, which must hold in the cross-replica merge_calls too) and
returns a typed result: TrainLoopResult or InferenceLoopResult.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

from estimators.distribute.strategy import spans_workers
from estimators.training import host_call
from estimators.training.logging_hook import StepFetches
from estimators.training.step_summaries import StepSummaries

_SUM = tf.distribute.ReduceOp.SUM
_MEAN = tf.distribute.ReduceOp.MEAN
_ITERATIONS = tf.TensorSpec([], tf.int32)


_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@contextlib.contextmanager
def engine_checks_unwrapped() -> Iterator[None]:
    """While tracing: the engine's own checks (a spec without loss, metrics that are not metrics...) come out
    as raised, with their one-line message, not inside autograph's "in user code" listing of frames.

    Errors raised in user code (model_fn, metric_fn, Keras) keep the listing: it points at their line.
    """
    try:
        yield
    except Exception as err:
        original = err.__context__ if getattr(err, "ag_error_metadata", None) is not None else None
        if original is not None and type(original) is type(err) and _raised_in_engine(str(err)):
            raise original.with_traceback(None) from None
        raise


def _raised_in_engine(listing: str) -> bool:
    """Whether the innermost frame of autograph's listing (the source lines it maps back to) is the engine's."""
    frames = re.findall(r'File "([^"]+)", line \d+', listing)
    return bool(frames) and os.path.abspath(frames[-1]).startswith(_ENGINE_DIR)


class TrainLoopResult(NamedTuple):
    """What one training loop did: steps run (fewer than asked when the input ended), last loss and rate, and
    the mean over its steps of each scalar model_fn reported (training/train_metrics.py; {} when none)."""

    steps: int
    loss: float
    learning_rate: float
    metrics: dict = {}  # never mutated: results that have metrics carry a dict of their own


def _tag(name: str, host_call: HostCall | None) -> str:
    """The engine's summary tag for `name`: `name_1` when the host_call writes `name` (2.15 built the host_call's
    ops first, so its own `loss` summary became `loss_1`)."""
    return f"{name}_1" if host_call is not None and name in host_call.tags else name


class InferenceLoopResult(NamedTuple):
    """What one eval/predict loop did; `rows`/`mask` are every replica's per-row outputs in input order."""

    steps: int
    ended: bool
    loss_sum: float  # the losses times their weights (tf2/steps.py InferenceOutputs)
    count: float  # real rows
    rows: Any
    mask: np.ndarray
    step_rows: np.ndarray  # rows (real and padding) each step added, in order: steps are the batches
    loss_weight: float = 0.0  # the weights' sum: the evaluation loss is loss_sum / loss_weight


def _gather(strategy: tf.distribute.Strategy, per_replica: Any) -> Any:
    """Every replica's rows (on every worker), concatenated in replica order = input order."""
    across_workers = spans_workers(strategy)

    def gather(value):
        local = strategy.experimental_local_results(value)
        if not local[0].shape.rank:
            raise ValueError(
                "Tensors in eval_metrics and predictions need a batch dimension (one row per example); "
                f"got a scalar: {local[0]}."
            )
        if not across_workers:
            return tf.concat(local, axis=0)
        if local[0].dtype == tf.bool:  # collectives carry numbers only
            as_int = strategy.run(lambda t: tf.cast(t, tf.int32), args=(value,))
            return tf.cast(strategy.gather(as_int, axis=0), tf.bool)
        return strategy.gather(value, axis=0)

    return tf.nest.map_structure(gather, per_replica)


@dataclass
class HostCall:
    """Runs TPUEstimatorSpec.host_call after train steps: the gathered tensors to its function on the host.

    `fn` is read after the step is traced (model_fn returns it); `here` is False on workers that only
    take part in the gather (the chief calls the function); `every` is TPUConfig's
    experimental_host_call_every_n_steps, counted within each loop from its first step, as in 2.15.
    """

    fn: Callable[[], Callable | None]
    global_step: tf.Variable
    here: bool = True
    every: int = 1
    writers: dict = field(default_factory=dict)  # file writers the function made, kept alive
    tags: set = field(default_factory=set)  # summary tags the function writes

    def flush(self) -> None:
        """Writes out what the function's own writers hold (after every loop, as 2.15 did at the end of train)."""
        for writer in self.writers.values():
            writer.flush()

    def after_step(self, strategy: tf.distribute.Strategy, tensors: Any, index: tf.Tensor) -> None:
        """Train: every step, or every `every`-th step of the loop."""
        self._call(strategy, tensors, None if self.every == 1 else tf.equal(index % self.every, 0))

    def after_inference_step(self, strategy: tf.distribute.Strategy, tensors: Any, real_rows: tf.Tensor) -> None:
        """Eval/predict: every step with real rows (the all-padding step that ends the stream calls nothing)."""
        self._call(strategy, tensors, real_rows > 0)

    def _call(self, strategy: tf.distribute.Strategy, tensors: Any, when: tf.Tensor | None) -> None:
        """Gathers the tensors (every worker takes part) and calls the function here, always or when `when` holds."""
        fn = self.fn()
        if fn is None:
            return
        gathered = host_call.gather(strategy, tensors)
        if not self.here:
            return
        if when is None:
            self.tags |= host_call.call(fn, gathered, self.global_step, self.writers)
            return

        def call_now():
            self.tags |= host_call.call(fn, gathered, self.global_step, self.writers)
            return tf.constant(0)

        tf.cond(when, call_now, lambda: tf.constant(0))


class TrainLoop:
    """Up to `iterations` train steps per call; one step per call without a loop when single_step.

    For one step per call, a tf.range loop with an optional-element check costs a fraction of a
    millisecond, which is most of a step for small models; Keras takes the same shortcut. `stop`
    (a host-side boolean variable) is read before every step: set while the loop runs (SIGTERM), it
    ends the loop at the next step boundary.

    Scalars model_fn reported (train_metrics.report) are averaged over replicas and written beside
    the loss, here in the loop, outside the (possibly XLA-compiled) step; the loop returns their mean
    over its steps. Their names are known once the step is traced, inside the loop's trace, so the
    loop collects each step's values in a TensorArray (its structure does not depend on them).
    """

    def __init__(self, strategy: tf.distribute.Strategy, step: Callable, step_scope: Callable[[], Any],
                 single_step: bool, stop: tf.Variable, summaries: StepSummaries | None = None,
                 writes_learning_rate: Callable[[], bool] = lambda: True, host_call: HostCall | None = None,
                 fetches: StepFetches | None = None):
        recording = summaries.recording if summaries is not None else contextlib.nullcontext

        def run(element, index):
            with recording():
                with step_scope():
                    outputs = strategy.run(step, args=(element,))
                loss = strategy.reduce(_MEAN, outputs.loss, axis=None)
                learning_rate = strategy.experimental_local_results(outputs.learning_rate)[0]
                metrics = {name: tf.math.divide_no_nan(strategy.reduce(_SUM, weighted, axis=None),
                                                       strategy.reduce(_SUM, weight, axis=None))
                           for name, (weighted, weight) in (outputs.metrics or {}).items()}
                if self._traced_names is not None and tuple(metrics) != self._traced_names:
                    raise ValueError(  # an older trace's values would be read under these names
                        f"model_fn reported {list(metrics)} with train_metrics.report in this trace of the train "
                        f"step but {list(self._traced_names)} in an earlier one: report the same names every call.")
                self._traced_names = tuple(metrics)
                if host_call is not None:
                    host_call.after_step(strategy, outputs.host_call, index)
                if summaries is not None:
                    summaries.scalar(_tag("loss", host_call), loss)
                    if writes_learning_rate():
                        summaries.scalar("learning_rate", learning_rate)
                    for name, value in metrics.items():
                        summaries.scalar(_tag(name, host_call), value)
                if fetches is not None:  # replica 0's values, as a one-device session.run saw them
                    fetches.graph_callback({key: strategy.experimental_local_results(value)[0]
                                            for key, value in outputs.fetched.items()})
            return loss, learning_rate, tf.stack(list(metrics.values())) if metrics else tf.zeros([0])

        @tf.function
        def loop(iterator, iterations):
            loss, learning_rate, done = tf.constant(0.0), tf.constant(0.0), tf.constant(0)
            values = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False,
                                    element_shape=tf.TensorShape([None]))
            for _ in tf.range(iterations):
                if stop.read_value():
                    break
                element = iterator.get_next_as_optional()
                if not element.has_value():
                    break
                loss, learning_rate, step_values = run(element.get_value(), done)
                if self._reported_names:  # known once run() is traced, just above: reporting nothing, nothing kept
                    values = values.write(done, step_values)
                done += 1
            if not self._reported_names:
                return done, loss, learning_rate, tf.zeros([0])
            means = tf.reduce_mean(tf.reshape(values.concat(), [done, len(self._reported_names)]), axis=0)
            return done, loss, learning_rate, means

        @tf.function
        def one_step(iterator):
            loss, learning_rate, step_values = run(next(iterator), tf.constant(0))
            return tf.constant(1), loss, learning_rate, step_values

        self._traced_names: tuple[str, ...] | None = None  # what model_fn reports, in its order (set by the trace)
        self._single = single_step
        self._function = one_step if single_step else loop
        self._host_call = host_call
        self.fetches = fetches

    def trace(self, iterator) -> None:
        """Compiles the loop for this iterator now (a shorter last loop reuses it: iterations is a tensor)."""
        with engine_checks_unwrapped():
            if self._single:
                self._function.get_concrete_function(iterator)
            else:
                self._function.get_concrete_function(iterator, _ITERATIONS)

    def tracing_count(self) -> int:
        return self._function.experimental_get_tracing_count()

    @property
    def _reported_names(self) -> tuple[str, ...]:
        return self._traced_names or ()

    def __call__(self, iterator, iterations: int) -> TrainLoopResult:
        if self._single:
            try:
                done, loss, rate, means = self._function(iterator)
            except tf.errors.OutOfRangeError:
                return TrainLoopResult(0, float("nan"), 0.0, {})
        else:
            done, loss, rate, means = self._function(iterator, tf.constant(iterations))
        if self._host_call is not None:
            self._host_call.flush()
        metrics = dict(zip(self._reported_names, means.numpy().tolist(), strict=True)) if int(done) else {}
        return TrainLoopResult(int(done), float(loss), float(rate), metrics)


class InferenceLoop:
    """Up to `iterations` eval or predict steps over a padded stream per call.

    The stream after input_fn's data is all padding: the loop ends after the first step in which
    no replica on any worker had a real row. The step has one call site (a TPU compiles each
    `strategy.run` site of a program on its own): the element to run is a loop variable, starting
    with the caller's and fetched at the end of every step; the loop hands the last one fetched
    back, to start the next loop (Keras's TPU loops carry their next input the same way).
    `stop` (a host-side boolean variable, evaluation only) is read before every step after the
    first, as in TrainLoop: set while the loop runs (SIGINT/SIGTERM), it ends the loop before the
    next batch (the caller checks it before starting a loop).
    """

    def __init__(self, strategy: tf.distribute.Strategy, step: Callable, step_scope: Callable[[], Any],
                 host_call: HostCall | None = None, stop: tf.Variable | None = None):
        def real_rows(element):
            per_replica = strategy.run(lambda e: tf.reduce_sum(tf.cast(e[1], tf.float32)), args=(element,))
            return strategy.reduce(_SUM, per_replica, axis=None)

        def replica_step(element):
            with step_scope():
                weighted, real, rows, mask, host_tensors, weight = strategy.run(step, args=(element,))
            return weighted, real, _gather(strategy, rows), _gather(strategy, mask), host_tensors, weight

        def run(element):
            weighted, real, rows, mask, host_tensors, weight = replica_step(element)
            total_real = strategy.reduce(_SUM, real, axis=None)
            if host_call is not None:
                host_call.after_inference_step(strategy, host_tensors, total_real)
            return (strategy.reduce(_SUM, weighted, axis=None), total_real, rows, mask,
                    strategy.reduce(_SUM, weight, axis=None))

        def stopping():
            return stop.read_value() if stop is not None else tf.constant(False)

        @tf.function
        def loop(iterator, first, iterations):
            arrays = tf.nest.map_structure(
                lambda dtype: tf.TensorArray(dtype, size=0, dynamic_size=True, infer_shape=False), self._row_dtypes)
            sizes = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
            loss_sum, count, loss_weight = tf.constant(0.0), tf.constant(0.0), tf.constant(0.0)
            done, ended, element = tf.constant(0), tf.constant(False), first
            while done < iterations and not ended and (done == 0 or not stopping()):
                # The caller's element always runs (it checked it has rows, or the input has none at all);
                # the stream's all-padding end is not run: model_fn never sees a batch without a real row
                # (some kernels reject zero-row batches: oneDNN's Conv2D on the CPU).
                if tf.logical_or(done == 0, real_rows(element) > 0):
                    loss, real, rows, mask, weight = run(element)
                    loss_sum += loss
                    count += real
                    loss_weight += weight
                    arrays = tf.nest.map_structure(lambda ta, t, at=done: ta.write(at, t), arrays, (rows, mask))
                    sizes = sizes.write(done, tf.shape(mask)[0])
                    done += 1
                    ended = count == 0
                else:
                    ended = True
                element = next(iterator)
            rows, mask = tf.nest.map_structure(lambda ta: ta.concat(), arrays)
            return done, ended, loss_sum, count, rows, mask, sizes.stack(), element, loss_weight

        self._function = loop
        self._replica_step = replica_step
        self._row_dtypes = None
        self._real_rows = tf.function(real_rows)
        self._host_call = host_call

    def has_rows(self, element) -> bool:
        """Whether an element (from the caller's next()) holds a real row on any replica or worker."""
        return bool(self._real_rows(element) > 0)

    def trace(self, iterator, element_spec) -> None:
        """Compiles for the iterator's element spec, so a partial last batch reuses the same program.

        The arrays that collect each step's rows need their dtypes before the loop's one call site
        runs: they come from a trace of the step alone (a graph that never runs).
        """
        with engine_checks_unwrapped():
            outputs = tf.function(self._replica_step).get_concrete_function(element_spec).structured_outputs
            self._row_dtypes = tf.nest.map_structure(lambda t: t.dtype, (outputs[2], outputs[3]))
            self._function.get_concrete_function(iterator, element_spec, _ITERATIONS)

    def __call__(self, iterator, first, iterations: int) -> tuple[InferenceLoopResult, Any]:
        """Runs from `first`; returns the loop's result and the element to start the next loop with."""
        with engine_checks_unwrapped():
            done, ended, loss_sum, count, rows, mask, sizes, following, loss_weight = self._function(
                iterator, first, tf.constant(iterations))
        if self._host_call is not None:
            self._host_call.flush()
        result = InferenceLoopResult(int(done), bool(ended), float(loss_sum), float(count), rows, np.asarray(mask),
                                     np.asarray(sizes), float(loss_weight))
        return result, following
