"""make_stop_at_checkpoint_step_hook: stop a worker once the chief's checkpoints reach a step.

tf.estimator.experimental.make_stop_at_checkpoint_step_hook, for asynchronous (parameter server)
training, where every worker runs its own session: the chief stops at `last_step` (a plain
tf.compat.v1.train.StopAtStepHook), while another worker, which cannot see the step the chief has
saved, stops only once the newest checkpoint in model_dir has reached `last_step`. Both are
tf.compat.v1 SessionRunHooks, so an estimator given one trains on the graph-and-session path.
"""

from __future__ import annotations

import time
from typing import Any

import tensorflow as tf

from estimators.checkpoint.checkpointer import Checkpointer


def checkpoint_step(model_dir: str) -> int:
    """The global step of model_dir's newest checkpoint; 0 when there is none (or it cannot be read)."""
    try:
        path = tf.train.latest_checkpoint(model_dir)
        if path is None:
            return 0
        return Checkpointer(model_dir, is_chief=False).global_step(path)  # name- or object-based
    except (tf.errors.OpError, ValueError, KeyError):
        return 0


class StopAtCheckpointStepHook(tf.compat.v1.train.SessionRunHook):
    """Requests a stop once this worker is at last_step and model_dir's newest checkpoint is too.

    Until the checkpoint has caught up, each step past last_step re-reads the checkpoint and then
    waits wait_after_file_check_secs, so that many workers do not read the same file in a loop.
    """

    def __init__(self, model_dir: str, last_step: int, wait_after_file_check_secs: float = 30):
        if last_step is None:
            raise ValueError("last_step must be specified.")
        if model_dir is None:
            raise ValueError("model_dir must be specified.")
        self._model_dir = model_dir
        self._last_step = last_step
        self._wait_after_file_check_secs = wait_after_file_check_secs
        self._global_step = None

    def begin(self) -> None:
        self._global_step = tf.compat.v1.train.get_global_step()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use StopAtCheckpointStepHook.")

    def before_run(self, run_context: Any) -> tf.compat.v1.train.SessionRunArgs:
        return tf.compat.v1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        step_after_this_run = run_values.results + 1
        if step_after_this_run < self._last_step:
            return
        if checkpoint_step(self._model_dir) >= self._last_step:
            run_context.request_stop()
        else:
            time.sleep(self._wait_after_file_check_secs)


_StopAtCheckpointStepHook = StopAtCheckpointStepHook  # 2.15's name for it (hooks._StopAtCheckpointStepHook)


def make_stop_at_checkpoint_step_hook(estimator: Any, last_step: int,
                                      wait_after_file_check_secs: float = 30) -> tf.compat.v1.train.SessionRunHook:
    """The chief: tf.compat.v1.train.StopAtStepHook(last_step); other workers: a StopAtCheckpointStepHook
    on estimator.model_dir."""
    if estimator.config.is_chief:
        return tf.compat.v1.train.StopAtStepHook(last_step=last_step)
    return StopAtCheckpointStepHook(estimator.model_dir, last_step, wait_after_file_check_secs)
