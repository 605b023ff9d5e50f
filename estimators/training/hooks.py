"""Hooks and saving listeners, TF2-style: small objects the training loop calls between compiled loops.

TF1's SessionRunHooks ran around every session.run; here the unit is a compiled loop of
iterations_per_loop steps, so a hook sees each loop's result (as Orbit's actions do). A hook may
ask training to stop; the engine stops at that loop boundary and saves, as StopAtStepHook's
request_stop() ended a MonitoredSession.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import tensorflow as tf

# NanLossError lives beside the checkpoint check, which raises its subclass NonFiniteCheckpointError.
from estimators.checkpoint.finite import NanLossError as NanLossError
from estimators.checkpoint.finite import diverged_message


@dataclass(frozen=True)
class LoopInfo:
    """What one training loop did, as hooks see it."""

    step: int  # global step after the loop
    steps: int  # steps the loop ran
    loss: float  # the last step's loss (mean over replicas)
    learning_rate: float | None  # the rate the last step used; None without an optimizer
    seconds: float  # wall time of the loop
    # model_fn's reported scalars (training/train_metrics.py), mean over the loop; read-only, and out of the hash
    metrics: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}), hash=False)


class Hook:
    """Called by train() between compiled loops; override what you need. Return True to stop training."""

    def begin(self, step: int) -> None:
        """Once, before the first loop of a train() call, at global step `step`."""

    def after_loop(self, info: LoopInfo) -> bool | None:
        """After every loop; returning True stops training at this boundary (a checkpoint is saved)."""

    def end(self, step: int) -> None:
        """Once, after the last loop and the final checkpoint of a train() call."""


class SessionProtocol:
    """Lets an engine hook that has a tf.compat.v1 original (`session_hook()`) run in a tf.compat.v1
    MonitoredSession as well: called with the session protocol (begin() without a step), the hook makes its
    original and hands it every call (after_create_session, before_run, after_run, end(session))."""

    _session_original: Any = None

    def session_hook(self) -> tf.compat.v1.train.SessionRunHook:
        raise NotImplementedError

    def _begin_session(self) -> None:
        self._session_original = self.session_hook()
        self._session_original.begin()

    def _session(self) -> Any:
        if self._session_original is None:
            raise RuntimeError(f"{type(self).__name__}: call begin() before using it in a tf.compat.v1 session.")
        return self._session_original

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._session().after_create_session(session, coord)

    def before_run(self, run_context: Any) -> Any:
        return self._session().before_run(run_context)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self._session().after_run(run_context, run_values)


def is_session_call(step: Any) -> bool:
    """Whether begin(step)/end(step) was called with the session protocol (no step, or a Session)."""
    return step is None or isinstance(step, tf.compat.v1.Session | tf.compat.v1.InteractiveSession) or (
        not isinstance(step, int) and hasattr(step, "run"))


class SavingListener:
    """tf.estimator's CheckpointSaverListener, TF2-style: called around every checkpoint train() writes."""

    def begin(self) -> None:
        """Once, before training starts."""

    def before_save(self, step: int) -> None:
        """Before the checkpoint for global step `step` is written."""

    def after_save(self, step: int, path: str | None) -> bool | None:
        """After it is written (`path` is None on workers that do not write); True stops training."""

    def end(self, step: int) -> None:
        """Once, after training."""


class StopAtStepHook(SessionProtocol, Hook):
    """Stops training after `num_steps` more steps or at `last_step` (tf.estimator.StopAtStepHook's contract).

    In a tf.compat.v1 MonitoredSession (begin() without a step) it runs as tf.compat.v1's StopAtStepHook.
    """

    def __init__(self, num_steps: int | None = None, last_step: int | None = None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("StopAtStepHook needs exactly one of num_steps and last_step.")
        for name, value in (("num_steps", num_steps), ("last_step", last_step)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"StopAtStepHook {name} must be an integer >= 0, got {value!r}.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self, step: int | None = None) -> None:
        if step is None:
            return self._begin_session()
        if self._num_steps is not None:
            self._last_step = step + self._num_steps
        return None

    def end(self, step: Any = None) -> None:
        if self._session_original is not None and is_session_call(step):
            self._session_original.end(step)

    def session_hook(self) -> tf.compat.v1.train.StopAtStepHook:
        """tf.compat.v1's StopAtStepHook with these arguments (the graph path runs it)."""
        return tf.compat.v1.train.StopAtStepHook(num_steps=self._num_steps,
                                                 last_step=None if self._num_steps is not None else self._last_step)

    @property
    def last_step(self) -> int | None:
        """The step training stops at (known once training began, for num_steps)."""
        return self._last_step

    def after_loop(self, info: LoopInfo) -> bool:
        return self._last_step is not None and info.step >= self._last_step


class NanGuard(Hook):
    """Stops training with NanLossError when the loss is not finite; no checkpoint is written for that step.

    Always on (it was tf.estimator's NanTensorHook with fail_on_nan_loss=True by default). `resume_note`
    gives the message's sentence naming the checkpoint a resume starts from (Checkpointer.resume_note).
    """

    def __init__(self, resume_note: Callable[[], str] | None = None):
        self._resume_note = resume_note

    def after_loop(self, info: LoopInfo) -> None:
        if info.steps and not math.isfinite(info.loss):
            note = self._resume_note() if self._resume_note is not None else "The previous checkpoint stays latest."
            raise NanLossError(diverged_message(f"Loss became {info.loss}", info.step, note))


def stop_requested(hook_replies: Sequence[Any]) -> bool:
    return any(reply is True for reply in hook_replies)


def checked_hooks(hooks: Iterable | None, what: str, kind: type = Hook) -> list:
    """The hooks given to train()/evaluate()/a spec or TrainSpec: engine hooks, or tf.compat.v1 session hooks and
    saver listeners (those put the call on the graph path); anything else is refused naming the kinds."""
    result = []
    if isinstance(hooks, kind):
        hooks = [hooks]  # one hook where a list was meant: as good as a list of one
    if hooks is not None and not isinstance(hooks, Iterable):
        raise TypeError(f"{what} must be a list of estimators.{kind.__name__} objects, got {type(hooks).__name__} "
                        f"{hooks!r:.40} (the third positional argument of train() is hooks: pass max_steps=...).")
    for hook in hooks or ():
        if isinstance(hook, (tf.compat.v1.train.SessionRunHook, tf.compat.v1.train.CheckpointSaverListener)):
            result.append(hook)  # the call that gets it runs on the graph path (estimators/path_choice.py)
            continue
        if not isinstance(hook, kind):
            if kind is Hook:
                raise TypeError(f"{what}: each hook must be a SessionRunHook (tf.compat.v1.train) or an "
                                f"estimators.Hook; got {type(hook).__name__}.")
            raise TypeError(f"{what} must be a list of CheckpointSaverListener (tf.compat.v1.train) or "
                            f"estimators.{kind.__name__} objects; got {type(hook).__name__}.")
        result.append(hook)
    return result
