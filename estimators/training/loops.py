"""Compiled loops: `iterations` steps inside one tf.function call, as TPUEstimator's loops did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.distribute.strategy import spans_workers

_SUM = tf.distribute.ReduceOp.SUM
_MEAN = tf.distribute.ReduceOp.MEAN


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


def train_loop(strategy: tf.distribute.Strategy, step: Callable, global_step: tf.Variable) -> Callable:
    """A tf.function running up to `iterations` train steps; returns (steps run, last loss, lr)."""

    @tf.function
    def loop(iterator, iterations):
        loss = tf.constant(0.0)
        learning_rate = tf.constant(0.0)
        done = tf.constant(0)
        for _ in tf.range(iterations):
            element = iterator.get_next_as_optional()
            if not element.has_value():
                break
            losses, rates = strategy.run(step, args=(element.get_value(),))
            loss = strategy.reduce(_MEAN, losses, axis=None)
            learning_rate = strategy.experimental_local_results(rates)[0]
            done += 1
        global_step.assign_add(tf.cast(done, tf.int64))  # once per loop: the step is read between loops
        return done, loss, learning_rate

    return loop


class SingleStepLoop:
    """iterations_per_loop=1 without a loop: one step per call, the end of input an OutOfRangeError.

    A tf.range loop with an optional-element check costs a fraction of a millisecond per call,
    which is most of a step for small models; Keras takes the same shortcut for one step.
    """

    def __init__(self, strategy: tf.distribute.Strategy, step: Callable, global_step: tf.Variable):
        @tf.function
        def one_step(iterator):
            losses, rates = strategy.run(step, args=(next(iterator),))
            global_step.assign_add(1)
            return (tf.constant(1), strategy.reduce(_MEAN, losses, axis=None),
                    strategy.experimental_local_results(rates)[0])

        self._one_step = one_step

    def get_concrete_function(self, iterator, iterations=None):
        return self._one_step.get_concrete_function(iterator)

    def experimental_get_tracing_count(self) -> int:
        return self._one_step.experimental_get_tracing_count()

    def __call__(self, iterator, iterations=None):
        try:
            return self._one_step(iterator)
        except tf.errors.OutOfRangeError:
            return tf.constant(0), tf.constant(float("nan")), tf.constant(0.0)


def inference_loop(strategy: tf.distribute.Strategy, step: Callable) -> Callable:
    """A tf.function running up to `iterations` eval or predict steps over a padded stream.

    The stream after input_fn's data is all padding: the loop ends after the first step in which
    no replica on any worker had a real row. Returns (steps, ended, loss*rows summed, real rows,
    every replica's rows in input order, their mask).
    """

    def run(element):
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
        done = tf.constant(1)
        ended = count == 0
        while done < iterations and not ended:
            loss, real, rows, mask = run(next(iterator))
            loss_sum += loss
            count += real
            arrays = tf.nest.map_structure(lambda ta, t, at=done: ta.write(at, t), arrays, (rows, mask))
            done += 1
            ended = real == 0
        rows, mask = tf.nest.map_structure(lambda ta: ta.concat(), arrays)
        return done, ended, loss_sum, count, rows, mask

    return loop
