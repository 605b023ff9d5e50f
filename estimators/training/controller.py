"""The outer training loop: compiled loops to a target step, and what happens between them.

Between loops, in this order: the NaN guard and the hooks see the loop's result, progress is shown
and summaries written, a checkpoint is saved when due (saving listeners around it), and training
stops at the target step, at the end of the input, when a hook or listener asks, or on SIGTERM/
SIGINT (after saving). Estimator.train assembles one controller per call (Orbit's Controller is
the model: the API class stays a thin shell over this loop).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

from estimators import log as logging
from estimators.training.hooks import Hook, LoopInfo, NanGuard, SavingListener
from estimators.training.iterations import IterationsPerLoop
from estimators.training.loops import TrainLoopResult

TARGET, INPUT_ENDED, HOOK, SIGNAL = "target", "input_ended", "hook", "signal"


class TrainResult(NamedTuple):
    """How a train() call ended: the global step reached, why it stopped, and the last checkpoint."""

    step: int
    stopped_by: str  # TARGET, INPUT_ENDED, HOOK or SIGNAL
    checkpoint: str | None
    loss: float | None


@dataclass
class TrainPlan:
    """What one train() call runs: the loop and its input, where to stop, and its collaborators."""

    run_loop: Callable[[int], TrainLoopResult]  # runs up to n steps
    start: int
    target: float  # math.inf: until the input ends
    iterations: IterationsPerLoop
    save: Callable[[int], str | None]  # writes the checkpoint for a step; returns its path
    checkpoint_due: Callable[[int], bool]
    checkpoint_saved: Callable[[int], None]
    report: Callable[[LoopInfo, bool], None]  # progress and summaries after a loop (final?)
    stop_requested: Callable[[], str | None]  # a signal's name once SIGTERM/SIGINT arrived
    agree: Callable[[bool], bool]  # all workers' stop votes -> whether any wants to stop
    has_optimizer: Callable[[], bool]
    input_advanced: Callable[[int, bool], None]
    hooks: Sequence[Hook] = ()
    listeners: Sequence[SavingListener] = ()
    resume_note: Callable[[], str] | None = None  # the NaN error's sentence naming the latest finite checkpoint


class TrainController:
    """Runs a TrainPlan to its end and returns a TrainResult."""

    def __init__(self, plan: TrainPlan):
        self._plan = plan
        self._guard = NanGuard(plan.resume_note)

    def run(self) -> TrainResult:
        plan = self._plan
        step, stopped_by, checkpoint, loss = plan.start, TARGET, None, None
        last_saved = None
        for hook in plan.hooks:
            hook.begin(step)
        for listener in plan.listeners:
            listener.begin()
        while step < plan.target:
            iterations = plan.iterations.next(plan.target - step)
            started = time.monotonic()
            result = plan.run_loop(iterations)
            seconds = time.monotonic() - started
            plan.iterations.record(result.steps, seconds)
            ended = result.steps < iterations and plan.stop_requested() is None
            plan.input_advanced(result.steps, ended)
            step += result.steps
            if result.steps:
                loss = result.loss
                info = LoopInfo(step, result.steps, result.loss,
                                result.learning_rate if plan.has_optimizer() else None, seconds,
                                MappingProxyType(dict(result.metrics)))
                self._guard.after_loop(info)
                hook_stop = any([hook.after_loop(info) is True for hook in plan.hooks])
                final = ended or step >= plan.target or hook_stop or plan.stop_requested() is not None
                plan.report(info, final)
            else:
                hook_stop = False
            signal_name = plan.stop_requested()
            stop = plan.agree(bool(hook_stop or signal_name or ended))
            if result.steps and (plan.checkpoint_due(step) or stop):
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
        for hook in plan.hooks:
            hook.end(step)
        for listener in plan.listeners:
            listener.end(step)
        return TrainResult(step, stopped_by, checkpoint, loss)

    def _save(self, step: int) -> tuple[str | None, bool]:
        plan = self._plan
        for listener in plan.listeners:
            listener.before_save(step)
        path = plan.save(step)
        plan.checkpoint_saved(step)
        replies = [listener.after_save(step, path) for listener in plan.listeners]
        return path, any(reply is True for reply in replies)


def no_agreement(vote: bool) -> bool:
    """Within one process, a stop vote is the decision."""
    return vote


def finite(value: Any) -> bool:
    return value is not None and math.isfinite(value)
