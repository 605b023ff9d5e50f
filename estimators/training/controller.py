"""The outer training loop: compiled loops to a target step, and what happens between them.

Between loops, in this order: the NaN guard and the hooks see the loop's result, progress is shown
and summaries written, a checkpoint is saved when due (saving listeners around it), and training
stops at the target step, at the end of the input, when a hook or listener asks, or on SIGTERM/
SIGINT (after saving). The TF2 executor assembles one session and controller per train() call (Orbit's Controller is
the model: the API class stays a thin shell over this loop).
"""

from __future__ import annotations

import math
import time
from types import MappingProxyType
from typing import Any, NamedTuple

from estimators import log as logging
from estimators.training.hooks import LoopInfo, NanGuard

TARGET, INPUT_ENDED, HOOK, SIGNAL = "target", "input_ended", "hook", "signal"


class TrainResult(NamedTuple):
    """How a train() call ended: the global step reached, why it stopped, and the last checkpoint."""

    step: int
    stopped_by: str  # TARGET, INPUT_ENDED, HOOK or SIGNAL
    checkpoint: str | None
    loss: float | None


class TrainController:
    """Runs a train session (estimators/tf2/train_session.py) to its end and returns a TrainResult."""

    def __init__(self, session: Any):
        self._session = session
        self._guard = NanGuard(session.resume_note)

    def run(self) -> TrainResult:
        session = self._session
        step, stopped_by, checkpoint, loss = session.start, TARGET, None, None
        last_saved = None
        for hook in session.hooks:
            hook.begin(step)
        for listener in session.listeners:
            listener.begin()
        while step < session.target:
            iterations = session.iterations.next(session.target - step)
            started = time.monotonic()
            result = session.train(iterations)
            seconds = time.monotonic() - started
            session.iterations.record(result.steps, seconds)
            ended = result.steps < iterations and session.should_stop() is None
            session.input_advanced(result.steps, ended)
            step += result.steps
            if result.steps:
                loss = result.loss
                info = LoopInfo(step, result.steps, result.loss,
                                result.learning_rate if session.has_optimizer else None, seconds,
                                MappingProxyType(dict(result.metrics)))
                self._guard.after_loop(info)
                hook_stop = any([hook.after_loop(info) is True for hook in session.hooks])
                final = ended or step >= session.target or hook_stop or session.should_stop() is not None
                session.report(info, final)
            else:
                hook_stop = False
            signal_name = session.should_stop()
            stop = session.agree(bool(hook_stop or signal_name or ended))
            if result.steps and (session.checkpoint_due(step) or stop):
                checkpoint, listener_stop = self._save(step)
                last_saved = step
                stop = stop or listener_stop
            if signal_name is not None:
                stopped_by = SIGNAL
            elif ended:
                stopped_by = INPUT_ENDED
                logging.info("input_fn's data ended at global step %d.", step)
            elif hook_stop or stop:
                stopped_by = HOOK
            if stop or signal_name is not None or ended:
                break
        if last_saved != step:  # the same on every worker (only the chief gets a path): saving is collective
            checkpoint, _ = self._save(step)
        for hook in session.hooks:
            hook.end(step)
        for listener in session.listeners:
            listener.end(step)
        return TrainResult(step, stopped_by, checkpoint, loss)

    def _save(self, step: int) -> tuple[str | None, bool]:
        session = self._session
        for listener in session.listeners:
            listener.before_save(step)
        path = session.save(step)
        replies = [listener.after_save(step, path) for listener in session.listeners]
        return path, any(reply is True for reply in replies)


def no_agreement(vote: bool) -> bool:
    """Within one process, a stop vote is the decision."""
    return vote


def finite(value: Any) -> bool:
    return value is not None and math.isfinite(value)
