"""A graph-mode hook that sizes each training loop and stops at the last step (2.15's _TPUStopAtStepHook).

2.15's TPUEstimator ran `iterations_per_loop` steps per Session.run inside a while loop whose trip
count was a variable (`tpu_estimator/iterations_per_loop`). This hook writes that variable before
every run: the configured count, or for a time budget (iterations_per_loop="30s") what
IterationCountEstimator says fits, never more than the steps left; and it requests a stop once
the global step reaches the last one. It needs a graph with a global step.
"""

from __future__ import annotations

import time
from typing import Any

import tensorflow as tf

from estimators.tpu.iteration_count import IterationCountEstimator

_SCOPE = "tpu_estimator"
_VAR_NAME = "iterations_per_loop"
_COLLECTION = f"{_SCOPE}_{_VAR_NAME}"


def iterations_per_loop_variable() -> tf.Variable:
    """The default graph's loop trip-count variable (int32 scalar, a local variable), made on first use."""
    graph = tf.compat.v1.get_default_graph()
    found = graph.get_collection(_COLLECTION)
    if len(found) > 1:
        raise RuntimeError(f"More than one {_VAR_NAME} variable in collection {_COLLECTION!r}.")
    if found:
        return found[0]
    with graph.colocate_with(tf.compat.v1.train.get_global_step()), \
            tf.compat.v1.variable_scope(_SCOPE, reuse=tf.compat.v1.AUTO_REUSE):
        return tf.compat.v1.get_variable(
            _VAR_NAME, shape=[], dtype=tf.int32, initializer=tf.compat.v1.zeros_initializer(), trainable=False,
            collections=[_COLLECTION, tf.compat.v1.GraphKeys.LOCAL_VARIABLES], use_resource=True)


class TPUStopAtStepHook(tf.compat.v1.train.SessionRunHook):
    """Writes the next loop's step count before each run; stops at `final_step` (or `num_steps` from the start).

    `iterations_per_loop_counter` is TPUConfig's parsed iterations_per_loop: (value, unit) with unit
    "count" (steps per loop) or "seconds" (a time budget per loop).
    """

    def __init__(self, iterations_per_loop_counter: Any, num_steps: int | None = None,
                 final_step: int | None = None):
        if num_steps is None and final_step is None:
            raise ValueError("One of `num_steps` or `final_step` must be specified.")
        if num_steps is not None and final_step is not None:
            raise ValueError("Only one of `num_steps` or `final_step` can be specified.")
        if iterations_per_loop_counter.unit not in ("count", "seconds"):
            raise ValueError("Only `count` or `seconds` are accepted as the `iterations_per_loop_counter.unit`, "
                             f"got {iterations_per_loop_counter.unit!r}.")
        self._iterations_per_loop_counter = iterations_per_loop_counter
        self._num_steps = num_steps
        self._final_step = final_step
        self._next_iteration_count = 1
        self._iteration_count_estimator = (
            IterationCountEstimator() if iterations_per_loop_counter.unit == "seconds" else None)
        self._start_time = time.time()

    def _next_iterations(self, global_step: int, final_step: int) -> int:
        """The smaller of the steps left and the loop size (configured, or estimated for a time budget)."""
        if self._iteration_count_estimator is not None:
            wanted = self._iteration_count_estimator.get(self._iterations_per_loop_counter.value)
        else:
            wanted = self._iterations_per_loop_counter.value
        self._next_iteration_count = min(final_step - global_step, wanted)
        return self._next_iteration_count

    def begin(self) -> None:
        self._global_step_tensor = tf.compat.v1.train.get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created.")
        self._iterations_per_loop_var = iterations_per_loop_variable()

    def after_create_session(self, session: Any, coord: Any) -> None:
        global_step = session.run(self._global_step_tensor)
        if self._final_step is None:
            self._final_step = global_step + self._num_steps
        self._iterations_per_loop_var.load(self._next_iterations(global_step, self._final_step), session=session)

    def before_run(self, run_context: Any) -> None:
        if self._iteration_count_estimator is not None:
            self._start_time = time.time()

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if self._iteration_count_estimator is not None:
            self._iteration_count_estimator.update(time.time() - self._start_time, self._next_iteration_count)
        # read again here: the loop may have moved the global step several times during the run
        global_step = run_context.session.run(self._global_step_tensor)
        if global_step >= self._final_step:
            run_context.request_stop()
        else:
            self._iterations_per_loop_var.load(self._next_iterations(global_step, self._final_step),
                                               session=run_context.session)


_TPUStopAtStepHook = TPUStopAtStepHook  # 2.15's name (tpu_estimator._TPUStopAtStepHook)
