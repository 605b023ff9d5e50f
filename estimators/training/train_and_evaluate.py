"""train_and_evaluate: alternate training and evaluation, as tf.estimator.train_and_evaluate did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from absl import logging


class TrainSpec(NamedTuple):
    """How to train: input_fn and where to stop."""

    input_fn: Callable
    max_steps: int | None = None
    hooks: tuple = ()


class EvalSpec(NamedTuple):
    """How to evaluate: input_fn, batches per evaluation (None: all), and how often.

    Evaluation runs every `every_n_steps` training steps (default: every checkpoint,
    RunConfig.save_checkpoints_steps) and once at the end.
    """

    input_fn: Callable
    steps: int | None = 100
    name: str | None = None
    hooks: tuple = ()
    exporters: tuple = ()
    start_delay_secs: int = 120
    throttle_secs: int = 600
    every_n_steps: int | None = None


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
