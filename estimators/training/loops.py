"""Compiled loops: `iterations` steps inside one tf.function call, as TPUEstimator's loops did.

A loop runs strategy.run(step) inside `step_scope()` (the variable store's creator scope and the
strategy's estimator loss scaling, which must hold in the cross-replica merge_calls too) and
returns a typed result: TrainLoopResult or InferenceLoopResult.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

from estimators.distribute.strategy import spans_workers
from estimators.training.step_summaries import StepSummaries

_SUM = tf.distribute.ReduceOp.SUM
_MEAN = tf.distribute.ReduceOp.MEAN
_ITERATIONS = tf.TensorSpec([], tf.int32)


class TrainLoopResult(NamedTuple):
    """What one training loop did: steps run (fewer than asked when the input ended), last loss and rate."""

    steps: int
    loss: float
    learning_rate: float


class InferenceLoopResult(NamedTuple):
    """What one eval/predict loop did; `rows`/`mask` are every replica's per-row outputs in input order."""

    steps: int
    ended: bool
    loss_sum: float
    count: float
    rows: Any
    mask: np.ndarray
    step_rows: np.ndarray  # rows (real and padding) each step added, in order: steps are the batches


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


class TrainLoop:
    """Up to `iterations` train steps per call; one step per call without a loop when single_step.

    For one step per call, a tf.range loop with an optional-element check costs a fraction of a
    millisecond, which is most of a step for small models; Keras takes the same shortcut. `stop`
    (a host-side boolean variable) is read before every step: set while the loop runs (SIGTERM), it
    ends the loop at the next step boundary.
    """

    def __init__(self, strategy: tf.distribute.Strategy, step: Callable, step_scope: Callable[[], Any],
                 single_step: bool, stop: tf.Variable, summaries: StepSummaries | None = None,
                 has_optimizer: Callable[[], bool] = lambda: True):
        recording = summaries.recording if summaries is not None else contextlib.nullcontext

        def run(element):
            with recording():
                with step_scope():
                    outputs = strategy.run(step, args=(element,))
                loss = strategy.reduce(_MEAN, outputs.loss, axis=None)
                learning_rate = strategy.experimental_local_results(outputs.learning_rate)[0]
                if summaries is not None:
                    summaries.scalar("loss", loss)
                    if has_optimizer():
                        summaries.scalar("learning_rate", learning_rate)
            return loss, learning_rate

        @tf.function
        def loop(iterator, iterations):
            loss, learning_rate, done = tf.constant(0.0), tf.constant(0.0), tf.constant(0)
            for _ in tf.range(iterations):
                if stop.read_value():
                    break
                element = iterator.get_next_as_optional()
                if not element.has_value():
                    break
                loss, learning_rate = run(element.get_value())
                done += 1
            return done, loss, learning_rate

        @tf.function
        def one_step(iterator):
            loss, learning_rate = run(next(iterator))
            return tf.constant(1), loss, learning_rate

        self._single = single_step
        self._function = one_step if single_step else loop

    def trace(self, iterator) -> None:
        """Compiles the loop for this iterator now (a shorter last loop reuses it: iterations is a tensor)."""
        if self._single:
            self._function.get_concrete_function(iterator)
        else:
            self._function.get_concrete_function(iterator, _ITERATIONS)

    def tracing_count(self) -> int:
        return self._function.experimental_get_tracing_count()

    def __call__(self, iterator, iterations: int) -> TrainLoopResult:
        if self._single:
            try:
                done, loss, rate = self._function(iterator)
            except tf.errors.OutOfRangeError:
                return TrainLoopResult(0, float("nan"), 0.0)
        else:
            done, loss, rate = self._function(iterator, tf.constant(iterations))
        return TrainLoopResult(int(done), float(loss), float(rate))


class InferenceLoop:
    """Up to `iterations` eval or predict steps over a padded stream per call.

    The stream after input_fn's data is all padding: the loop ends after the first step in which
    no replica on any worker had a real row.
    """

    def __init__(self, strategy: tf.distribute.Strategy, step: Callable, step_scope: Callable[[], Any]):
        def run(element):
            with step_scope():
                weighted, real, rows, mask = strategy.run(step, args=(element,))
            return (strategy.reduce(_SUM, weighted, axis=None), strategy.reduce(_SUM, real, axis=None),
                    _gather(strategy, rows), _gather(strategy, mask))

        @tf.function
        def loop(iterator, first, iterations):
            # `first` comes from the caller: running it outside the loop fixes the output structure
            # and dtypes of the TensorArrays that collect each step's rows.
            loss_sum, count, rows, mask = run(first)
            arrays = tf.nest.map_structure(
                lambda t: tf.TensorArray(t.dtype, size=0, dynamic_size=True, infer_shape=False), (rows, mask)
            )
            arrays = tf.nest.map_structure(lambda ta, t: ta.write(0, t), arrays, (rows, mask))
            sizes = tf.TensorArray(tf.int32, size=0, dynamic_size=True).write(0, tf.shape(mask)[0])
            done = tf.constant(1)
            ended = count == 0
            while done < iterations and not ended:
                loss, real, rows, mask = run(next(iterator))
                loss_sum += loss
                count += real
                arrays = tf.nest.map_structure(lambda ta, t, at=done: ta.write(at, t), arrays, (rows, mask))
                sizes = sizes.write(done, tf.shape(mask)[0])
                done += 1
                ended = real == 0
            rows, mask = tf.nest.map_structure(lambda ta: ta.concat(), arrays)
            return done, ended, loss_sum, count, rows, mask, sizes.stack()

        self._function = loop

    def trace(self, iterator, element_spec) -> None:
        """Compiles for the iterator's element spec, so a partial last batch reuses the same program."""
        self._function.get_concrete_function(iterator, element_spec, _ITERATIONS)

    def __call__(self, iterator, first, iterations: int) -> InferenceLoopResult:
        done, ended, loss_sum, count, rows, mask, sizes = self._function(iterator, first, tf.constant(iterations))
        return InferenceLoopResult(int(done), bool(ended), float(loss_sum), float(count), rows, np.asarray(mask),
                                   np.asarray(sizes))

