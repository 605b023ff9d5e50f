"""Compiled loops: `iterations` steps inside one tf.function call, as TPUEstimator's loops did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

_SUM = tf.distribute.ReduceOp.SUM
_MEAN = tf.distribute.ReduceOp.MEAN


def _gather(strategy: tf.distribute.Strategy, per_replica: Any) -> Any:
    """Concatenates every replica's rows, in replica order (= input order)."""

    def concat(value):
        parts = strategy.experimental_local_results(value)
        return tf.concat(parts, axis=0) if parts[0].shape.rank else tf.stack(parts)

    return tf.nest.map_structure(concat, per_replica)


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
            global_step.assign_add(1)
            done += 1
        return done, loss, learning_rate

    return loop


def _structure_loop(strategy: tf.distribute.Strategy, step: Callable, with_loss: bool) -> Callable:
    """A tf.function running up to `iterations` eval or predict steps, gathering per-row outputs."""

    @tf.function
    def loop(iterator, first, iterations):
        # `first` is fetched by the caller (who stops when there is none); running it outside the
        # loop fixes the output structure and dtypes for the TensorArrays.
        outputs = strategy.run(step, args=(first,))
        if with_loss:
            weighted, real, rows, mask = outputs
            loss_sum = strategy.reduce(_SUM, weighted, axis=None)
            count = strategy.reduce(_SUM, real, axis=None)
        else:
            rows, mask = outputs
            loss_sum = count = tf.constant(0.0)
        rows, mask = _gather(strategy, rows), _gather(strategy, mask)
        arrays = tf.nest.map_structure(
            lambda t: tf.TensorArray(t.dtype, size=0, dynamic_size=True, infer_shape=False), (rows, mask)
        )
        arrays = tf.nest.map_structure(lambda ta, t: ta.write(0, t), arrays, (rows, mask))
        done = tf.constant(1)
        while done < iterations:
            element = iterator.get_next_as_optional()
            if not element.has_value():
                break
            outputs = strategy.run(step, args=(element.get_value(),))
            if with_loss:
                weighted, real, rows, mask = outputs
                loss_sum += strategy.reduce(_SUM, weighted, axis=None)
                count += strategy.reduce(_SUM, real, axis=None)
            else:
                rows, mask = outputs
            gathered = (_gather(strategy, rows), _gather(strategy, mask))
            arrays = tf.nest.map_structure(lambda ta, t, at=done: ta.write(at, t), arrays, gathered)
            done += 1
        rows, mask = tf.nest.map_structure(lambda ta: ta.concat(), arrays)
        return done, loss_sum, count, rows, mask

    return loop


def eval_loop(strategy: tf.distribute.Strategy, step: Callable) -> Callable:
    """Up to `iterations` eval steps: (steps, loss*rows summed, real rows, metric tensors, mask)."""
    return _structure_loop(strategy, step, with_loss=True)


def predict_loop(strategy: tf.distribute.Strategy, step: Callable) -> Callable:
    """Up to `iterations` predict steps: (steps, 0, 0, predictions, mask), rows in input order."""
    return _structure_loop(strategy, step, with_loss=False)
