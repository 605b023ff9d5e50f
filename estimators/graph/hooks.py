"""Hooks on the graph path: tf.compat.v1 SessionRunHooks run as they are; the engine's TF2 hooks are adapted.

estimators.LoggingTensorHook and StopAtStepHook become their tf.compat.v1 originals (same arguments);
any other estimators.Hook is called after every session.run as after a one-step loop.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np
import tensorflow as tf

from estimators.path_choice import is_session_hook
from estimators.training.hooks import Hook, LoopInfo, StopAtStepHook
from estimators.training.logging_hook import LoggingTensorHook


def session_hooks(hooks: Iterable | None, what: str, loss: Any = None) -> list:
    """`hooks` as SessionRunHooks (a single hook counts as a list of one); ValueError naming anything else."""
    if hooks is None:
        return []
    if is_session_hook(hooks) or isinstance(hooks, Hook):
        hooks = [hooks]
    result = []
    for hook in hooks:
        if is_session_hook(hook):
            result.append(hook)
        elif isinstance(hook, (LoggingTensorHook, StopAtStepHook)):
            result.append(hook.session_hook())
        elif isinstance(hook, Hook):
            result.append(LoopHookAdapter(hook, loss))
        else:
            raise ValueError(f"{what}: expected tf.compat.v1.train.SessionRunHook or estimators.Hook objects, got "
                             f"{type(hook).__name__}.")
    return result


class LoopHookAdapter(tf.compat.v1.train.SessionRunHook):
    """An estimators.Hook on the graph path: every session.run is a loop of one step."""

    def __init__(self, hook: Hook, loss: Any):
        self._hook, self._loss = hook, loss

    def begin(self) -> None:
        self._step_tensor = tf.compat.v1.train.get_global_step()

    def after_create_session(self, session, coord) -> None:
        del coord
        self._hook.begin(int(session.run(self._step_tensor)))
        self._started = time.monotonic()

    def before_run(self, run_context):
        del run_context
        self._started = time.monotonic()
        fetches = {"step": self._step_tensor}
        if self._loss is not None:
            fetches["loss"] = self._loss
        return tf.compat.v1.train.SessionRunArgs(fetches)

    def after_run(self, run_context, run_values) -> None:
        results = run_values.results
        loss = float(np.mean(results["loss"])) if "loss" in results else float("nan")
        info = LoopInfo(int(results["step"]) + 1, 1, loss, None, time.monotonic() - self._started)
        if self._hook.after_loop(info) is True:
            run_context.request_stop()

    def end(self, session) -> None:
        self._hook.end(int(session.run(self._step_tensor)))
