"""train_and_evaluate as tf.estimator 2.15 ran it on one machine: one train(), evaluations on new checkpoints.

Training runs once, to TrainSpec.max_steps (None: to the end of the input). A saving listener
evaluates after a checkpoint is saved when EvalSpec.throttle_secs have passed since the last
evaluation (the first checkpoint always), runs the exporters, and evaluates once more at the end
if the last checkpoint was not evaluated. Returns (last evaluation's metrics, export results).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from absl import logging

from estimators.training.hooks import SavingListener


class TrainSpec(NamedTuple):
    """How to train: input_fn, where to stop (None: the end of the input), hooks and saving listeners."""

    input_fn: Callable
    max_steps: int | None = None
    hooks: tuple = ()
    saving_listeners: tuple = ()


class EvalSpec(NamedTuple):
    """How to evaluate: input_fn, batches per evaluation (None: all), exporters, and how often.

    An evaluation follows a checkpoint save at most every `throttle_secs` seconds (tf.estimator's
    default 600; 0 evaluates every checkpoint), and one follows the end of training.
    `start_delay_secs` only delayed remote evaluators in tf.estimator; it is kept for signatures.
    """

    input_fn: Callable
    steps: int | None = 100
    name: str | None = None
    hooks: tuple = ()
    exporters: Any = ()
    start_delay_secs: int = 120
    throttle_secs: int = 600


class _EvaluateOnSave(SavingListener):
    """Evaluates (and exports) after saves, throttled; once more at the end if the last step was not."""

    def __init__(self, estimator: Any, eval_spec: EvalSpec, exporters: tuple, max_steps: int | None):
        self._estimator, self._spec, self._exporters = estimator, eval_spec, exporters
        self._max_steps = max_steps
        self._last_time: float | None = None
        self._last_step: int | None = None
        self.result: dict | None = None
        self.exports: list = []

    def after_save(self, step: int, path: str | None) -> None:
        elapsed = math.inf if self._last_time is None else time.monotonic() - self._last_time
        if elapsed >= self._spec.throttle_secs:
            self._evaluate(step)
        else:
            logging.info("Skipping the evaluation of step %d: throttle_secs=%s.", step, self._spec.throttle_secs)

    def end(self, step: int) -> None:
        if step != self._last_step:
            self._evaluate(step)

    def _evaluate(self, step: int) -> None:
        self._last_time, self._last_step = time.monotonic(), step
        estimator = self._estimator
        latest = estimator.latest_checkpoint()
        self.result = estimator.evaluate(self._spec.input_fn, steps=self._spec.steps, hooks=self._spec.hooks or None,
                                         checkpoint_path=latest, name=self._spec.name)
        logging.info("train_and_evaluate: evaluation at step %d: %s", self.result["global_step"], self.result)
        final = self._max_steps is not None and self.result["global_step"] >= self._max_steps
        for exporter in self._exporters:
            export_path = os.path.join(estimator.model_dir, "export", exporter.name)
            self.exports.append(exporter.export(estimator, export_path, latest, self.result, final))


def train_and_evaluate(estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec) -> tuple[dict | None, list]:
    """Trains to train_spec.max_steps, evaluating after new checkpoints (throttled) and at the end."""
    from estimators.export.exporters import validate_exporters

    if not isinstance(train_spec, TrainSpec):
        raise ValueError(f"train_spec must be a TrainSpec, got {type(train_spec).__name__}.")
    if not isinstance(eval_spec, EvalSpec):
        raise ValueError(f"eval_spec must be an EvalSpec, got {type(eval_spec).__name__}.")
    if train_spec.max_steps is not None and (
            isinstance(train_spec.max_steps, bool) or not isinstance(train_spec.max_steps, int)
            or train_spec.max_steps <= 0):
        raise ValueError(f"TrainSpec.max_steps must be a positive integer or None, got {train_spec.max_steps!r}.")
    if eval_spec.steps is not None and (not isinstance(eval_spec.steps, int) or eval_spec.steps <= 0):
        raise ValueError(f"EvalSpec.steps must be a positive integer or None, got {eval_spec.steps!r}.")
    if not isinstance(eval_spec.throttle_secs, int | float) or eval_spec.throttle_secs < 0:
        raise ValueError(f"EvalSpec.throttle_secs must be a number >= 0, got {eval_spec.throttle_secs!r}.")
    listener = _EvaluateOnSave(estimator, eval_spec, validate_exporters(eval_spec.exporters), train_spec.max_steps)
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks) or None,
                    saving_listeners=[*train_spec.saving_listeners, listener])
    return listener.result, listener.exports
