"""train_and_evaluate as tf.estimator 2.15 ran it on one machine: one train(), evaluations on new checkpoints.

Training runs once, to TrainSpec.max_steps (None: to the end of the input). A saving listener
evaluates after a checkpoint is saved when EvalSpec.throttle_secs have passed since the last
evaluation (the first checkpoint always), runs the exporters, and evaluates once more at the end
if the last checkpoint was not evaluated. Returns (last evaluation's metrics, export results).
A TF_CONFIG 'evaluator' task trains nothing: it evaluates the trainers' new checkpoints until max_steps.
"""

from __future__ import annotations

import collections
import math
import os
import time
from collections.abc import Callable
from typing import Any

from estimators import log as logging
from estimators.distribute.tf_config import EVALUATOR
from estimators.export.exporters import validate_exporters
from estimators.training.hooks import Hook, SavingListener, checked_hooks


def _check_input_fn(input_fn: Any) -> None:
    if not callable(input_fn):
        raise TypeError(f"input_fn must be callable, got {input_fn!r}.")


def _check_optional_positive(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}.")


def _check_seconds(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}.")


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """How to train: input_fn, where to stop (None: the end of the input), hooks and saving listeners.

    Checked when made, as tf.estimator 2.15 checked it (hooks and listeners become tuples).
    """

    def __new__(cls, input_fn: Callable, max_steps: int | None = None, hooks: Any = None,
                saving_listeners: Any = None) -> TrainSpec:
        _check_input_fn(input_fn)
        _check_optional_positive("TrainSpec max_steps", max_steps)
        hooks = tuple(checked_hooks(hooks, "TrainSpec hooks", Hook))
        listeners = tuple(checked_hooks(saving_listeners, "TrainSpec saving_listeners", SavingListener))
        return super().__new__(cls, input_fn, max_steps, hooks, listeners)


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"])):
    """How to evaluate: input_fn, batches per evaluation (None: all), exporters, and how often.

    An evaluation follows a checkpoint save at most every `throttle_secs` seconds (tf.estimator's
    default 600; 0 evaluates every checkpoint), and one follows the end of training.
    `start_delay_secs` delays the first evaluation of a TF_CONFIG 'evaluator' task, as in tf.estimator.
    Checked when made, as tf.estimator 2.15 checked it (exporters become a tuple with distinct names).
    """

    def __new__(cls, input_fn: Callable, steps: int | None = 100, name: str | None = None, hooks: Any = None,
                exporters: Any = None, start_delay_secs: float = 120, throttle_secs: float = 600) -> EvalSpec:
        _check_input_fn(input_fn)
        _check_optional_positive("EvalSpec steps", steps)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"EvalSpec name must be a string or None, got {name!r}.")
        hooks = tuple(hooks or ())  # evaluate() checks their kind
        _check_seconds("EvalSpec start_delay_secs", start_delay_secs)
        _check_seconds("EvalSpec throttle_secs", throttle_secs)
        return super().__new__(cls, input_fn, steps, name, hooks, validate_exporters(exporters), start_delay_secs,
                               throttle_secs)


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
        self.evaluate_latest()

    def evaluate_latest(self) -> None:
        """Evaluates the latest checkpoint and runs the exporters on it."""
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
    if getattr(estimator.config, "task_type", None) == EVALUATOR:
        return _continuous_evaluation(estimator, listener, train_spec.max_steps, eval_spec)
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks) or None,
                    saving_listeners=[*train_spec.saving_listeners, listener])
    return listener.result, listener.exports


def _continuous_evaluation(estimator: Any, listener: _EvaluateOnSave, max_steps: int | None,
                           eval_spec: EvalSpec) -> tuple[dict | None, list]:
    """A TF_CONFIG 'evaluator' task, as 2.15 ran it: after start_delay_secs, evaluate (and export) each new
    checkpoint the trainers write, at most every throttle_secs, until one reaches max_steps (None: forever)."""
    task_id = estimator.config.task_id
    if task_id:
        raise ValueError(f"TF_CONFIG names evaluator {task_id}; a cluster takes one evaluator, with index 0.")
    if eval_spec.start_delay_secs:
        logging.info("Evaluator: waiting %s s before the first evaluation (EvalSpec.start_delay_secs).",
                     eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    evaluated = None
    while True:
        started = time.monotonic()
        latest = estimator.latest_checkpoint()
        if latest is not None and latest != evaluated:
            evaluated = latest
            listener.evaluate_latest()
            if max_steps is not None and listener.result["global_step"] >= max_steps:
                logging.info("Evaluator: global step %d reached max_steps=%d; done.", listener.result["global_step"],
                             max_steps)
                return listener.result, listener.exports
        else:
            logging.info("Evaluator: no new checkpoint in %s yet.", estimator.model_dir)
        time.sleep(max(eval_spec.throttle_secs - (time.monotonic() - started), 0))
