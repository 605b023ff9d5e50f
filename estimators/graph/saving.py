"""Checkpoints on the graph path: the Scaffold's Saver writes, the Checkpointer verifies and publishes.

CheckpointHook keeps tf.compat.v1.train.CheckpointSaverHook's schedule (a checkpoint when the session
starts, then every save_steps or save_secs, and at the end) and its listeners, but every save goes
through Checkpointer.publish: written, fsynced, checked complete, then named in the `checkpoint` file,
so a crash or a full disk never leaves a half-written checkpoint as the latest. Variables holding NaN or Inf
are never saved (one reduction run before each save); a NaN loss and a restored non-finite checkpoint are
reported naming the checkpoint with finite values (checkpoint/finite.py).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import tensorflow as tf

from estimators.checkpoint import finite
from estimators.checkpoint.checkpointer import Checkpointer
from estimators.training.hooks import SavingListener


class CheckpointHook(tf.compat.v1.train.SessionRunHook):
    """Saves model.ckpt-<step> on CheckpointSaverHook's schedule through the Checkpointer."""

    def __init__(self, checkpointer: Checkpointer, scaffold: Any, *, save_steps: int | None, save_secs: float | None,
                 listeners: list, lock: Any = None, save_graph_def: bool = True):
        self._checkpointer, self._scaffold = checkpointer, scaffold
        self._timer = tf.compat.v1.train.SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners, self._lock, self._save_graph_def = listeners, lock, save_graph_def
        self.last_path: str | None = None

    def begin(self) -> None:
        self._step_tensor = tf.compat.v1.train.get_global_step()
        self._finite = _FiniteCheck(tf.compat.v1.global_variables())
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord) -> None:
        del coord
        if self._save_graph_def:  # 2.15 wrote the graph once per train(), beside the checkpoints
            try:
                tf.io.write_graph(session.graph.as_graph_def(add_shapes=True), self._checkpointer.model_dir,
                                  "graph.pbtxt")
            except (tf.errors.OpError, OSError) as err:  # disk full, read-only: the save's error, latest named
                raise self._checkpointer.save_error("graph.pbtxt", err) from None
        step = int(session.run(self._step_tensor))
        self._save(session, step)  # the state the run starts from, as 2.15's hook saved it
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        del run_context
        return tf.compat.v1.train.SessionRunArgs(self._step_tensor)

    def after_run(self, run_context, run_values) -> None:
        if not self._timer.should_trigger_for_step(int(run_values.results) + 1):
            return
        step = int(run_context.session.run(self._step_tensor))
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session) -> None:
        step = int(session.run(self._step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            _call(listener, "end", session, step)

    def _save(self, session, step: int) -> bool:
        """Writes and publishes the checkpoint for `step`; True when a listener asks training to stop."""
        for listener in self._listeners:
            _call(listener, "before_save", session, step)
        if self._lock is not None:
            self._lock.heartbeat()
        saver = self._scaffold.saver

        def write(prefix: str) -> None:
            base = prefix.rpartition("-")[0]
            saver.save(session, base, global_step=step, write_meta_graph=self._save_graph_def, write_state=False)

        self.last_path = self._checkpointer.publish(step, write, nonfinite=lambda: self._finite.nonfinite(session))
        tf.compat.v1.logging.info("Saving checkpoints for %d into %s.", step,
                                  os.path.join(self._checkpointer.model_dir, "model.ckpt"))
        replies = [_call(listener, "after_save", session, step, self.last_path) for listener in self._listeners]
        return any(reply is True for reply in replies)


def _call(listener: Any, method: str, session, step: int, path: str | None = None) -> Any:
    """A listener's method: tf.compat.v1 listeners take (session, step), the engine's take (step[, path])."""
    if isinstance(listener, SavingListener):
        if method == "after_save":
            return listener.after_save(step, path)
        return getattr(listener, method)(step)
    return getattr(listener, method)(session, step)


class StopOnSignal(tf.compat.v1.train.SessionRunHook):
    """Ends training after the step during which SIGINT/SIGTERM arrived; the checkpoint hook then saves."""

    def __init__(self, stop: Any):
        self._stop = stop

    def after_run(self, run_context, run_values) -> None:
        del run_values
        if self._stop.requested:
            run_context.request_stop()


class NanLossHook(tf.compat.v1.train.NanTensorHook):
    """2.15's NanTensorHook (fails on a NaN loss), raising NanLossError (a NanLossDuringTrainingError) whose
    message names the step and the latest checkpoint with finite values, the one a resume starts from."""

    def __init__(self, loss_tensor: Any, checkpointer: Checkpointer):
        super().__init__(loss_tensor, fail_on_nan_loss=True)
        self._checkpointer = checkpointer

    def begin(self) -> None:
        self._step_tensor = tf.compat.v1.train.get_global_step()

    def after_run(self, run_context, run_values) -> None:
        loss = run_values.results  # the loss alone, as 2.15 fetched it (another fetch would reorder the step's reads)
        if np.any(np.isnan(loss)):
            step = int(run_context.session.run(self._step_tensor))
            raise finite.NanLossError(finite.diverged_message(f"Loss became {np.mean(loss)}", step,
                                                              self._checkpointer.resume_note()))


class RestoredFiniteCheck(tf.compat.v1.train.SessionRunHook):
    """Warns when the checkpoint a session restored (evaluate, predict) holds NaN or Inf: one reduction over
    the restored variables once the session exists, no second read of the checkpoint's files."""

    def __init__(self, path: str | None):
        self._path = path

    def begin(self) -> None:
        self._finite = _FiniteCheck(tf.compat.v1.global_variables()) if self._path else None

    def after_create_session(self, session, coord) -> None:
        del coord
        bad = self._finite.nonfinite(session) if self._finite is not None else []
        if bad:
            finite.warn_restored(self._path, bad)


class _FiniteCheck:
    """One bool per floating-point variable of the graph, built before the graph is finalised, run in a session."""

    def __init__(self, variables: list):
        variables = finite.float_variables(variables)
        self._names = [var.name.split(":")[0] for var in variables]
        self._flags = finite.finite_flags_op(variables) if variables else None

    def nonfinite(self, session) -> list[str]:
        """Names of the variables holding NaN or Inf in `session`."""
        if self._flags is None:
            return []
        return [name for name, ok in zip(self._names, session.run(self._flags), strict=True) if not ok]
