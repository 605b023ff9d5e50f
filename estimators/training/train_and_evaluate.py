"""train_and_evaluate: alternate training and evaluation, as tf.estimator.train_and_evaluate did."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from absl import logging

from estimators.export.exporters import validate_exporters


def _check_input_fn(input_fn: Any) -> None:
    if not callable(input_fn):
        raise TypeError(f"input_fn must be callable, got {input_fn!r}.")


def _check_optional_positive(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}.")


def _check_seconds(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}.")


def _instances(values: Any, kind: type, what: str) -> tuple:
    values = tuple(values or ())
    for value in values:
        if not isinstance(value, kind):
            raise TypeError(f"{what} must be {kind.__module__}.{kind.__qualname__} instances, got {value!r}.")
    return values


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """How to train: input_fn and where to stop (None: until input_fn's data ends), checked as 2.15 did.

    hooks and saving_listeners keep 2.15's types (SessionRunHook, CheckpointSaverListener); TF2
    cannot run them, so non-empty ones are refused by train() and here.
    """

    def __new__(cls, input_fn: Callable, max_steps: int | None = None, hooks: Any = None,
                saving_listeners: Any = None) -> TrainSpec:
        _check_input_fn(input_fn)
        _check_optional_positive("TrainSpec max_steps", max_steps)
        hooks = _instances(hooks, tf.compat.v1.train.SessionRunHook, "TrainSpec hooks")
        listeners = _instances(saving_listeners, tf.compat.v1.train.CheckpointSaverListener,
                               "TrainSpec saving_listeners")
        if listeners:
            raise ValueError("TrainSpec saving_listeners are tf.compat.v1 CheckpointSaverListeners, which TF2 "
                             "cannot run; use EvalSpec exporters to act on new checkpoints.")
        return super().__new__(cls, input_fn, max_steps, hooks, listeners)


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs", "every_n_steps"])):
    """How to evaluate: input_fn, batches per evaluation (None: all), name, exporters, and when, checked as 2.15 did.

    start_delay_secs: no evaluation before that many seconds of training; throttle_secs: at least
    that many seconds between evaluations (2.15's meaning). every_n_steps (this project's): evaluate
    every N training steps (default: every checkpoint, RunConfig.save_checkpoints_steps) and at the end.
    """

    def __new__(cls, input_fn: Callable, steps: int | None = 100, name: str | None = None, hooks: Any = None,
                exporters: Any = None, start_delay_secs: float = 120, throttle_secs: float = 600,
                every_n_steps: int | None = None) -> EvalSpec:
        _check_input_fn(input_fn)
        _check_optional_positive("EvalSpec steps", steps)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"EvalSpec name must be a string or None, got {name!r}.")
        hooks = _instances(hooks, tf.compat.v1.train.SessionRunHook, "EvalSpec hooks")
        _check_seconds("EvalSpec start_delay_secs", start_delay_secs)
        _check_seconds("EvalSpec throttle_secs", throttle_secs)
        _check_optional_positive("EvalSpec every_n_steps", every_n_steps)
        return super().__new__(cls, input_fn, steps, name, hooks, validate_exporters(exporters), start_delay_secs,
                               throttle_secs, every_n_steps)


def train_and_evaluate(estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec) -> tuple[dict, list]:
    """Trains to train_spec.max_steps, evaluating every N steps and at the end.

    Returns (last evaluation's metrics, export results), as tf.estimator's did.
    """
    if not isinstance(train_spec, TrainSpec):
        raise ValueError(f"train_spec must be a TrainSpec, got {type(train_spec).__name__}.")
    if not isinstance(eval_spec, EvalSpec):
        raise ValueError(f"eval_spec must be an EvalSpec, got {type(eval_spec).__name__}.")
    if train_spec.max_steps is None:
        raise ValueError("train_and_evaluate needs TrainSpec.max_steps (when to stop training).")
    every = eval_spec.every_n_steps or estimator.config.save_checkpoints_steps or train_spec.max_steps
    if every <= 0:
        raise ValueError(f"EvalSpec.every_n_steps must be positive, got {every}.")
    result: dict = {}
    exports: list = []
    while True:
        latest = estimator.latest_checkpoint()
        from estimators.checkpoint.checkpoints import global_step_of

        step = global_step_of(latest) if latest else 0
        if step >= train_spec.max_steps and result:
            break
        target = min(train_spec.max_steps, (step // every + 1) * every)
        estimator.train(train_spec.input_fn, hooks=train_spec.hooks or None, max_steps=target)
        result = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, name=eval_spec.name,
                                    hooks=eval_spec.hooks or None)
        logging.info("train_and_evaluate: step %d, %s", result["global_step"], result)
        for exporter in eval_spec.exporters:
            exports.append(exporter.export(estimator, estimator.model_dir, estimator.latest_checkpoint(),
                                           result, result["global_step"] >= train_spec.max_steps))
        if result["global_step"] >= train_spec.max_steps:
            break
    return result, exports
