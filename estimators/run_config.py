"""RunConfig and TPUConfig: where a run writes and how often, checked when they are made."""

from __future__ import annotations

import dataclasses
from typing import Any

import tensorflow as tf

from estimators.training import iterations


def _check_positive(name: str, value: Any, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}.")


@dataclasses.dataclass(frozen=True)
class TPUConfig:
    """TPU loop settings. `iterations_per_loop` steps (or a duration such as "30s") run inside one compiled call.

    `experimental_host_call_every_n_steps`: TPUEstimatorSpec.host_call runs on every n-th step of a loop.
    """

    iterations_per_loop: int | str = 2
    num_shards: int | None = None
    per_host_input_for_training: Any = True
    eval_training_input_configuration: Any = None
    experimental_host_call_every_n_steps: int = 1

    def __post_init__(self) -> None:
        iterations.parse(self.iterations_per_loop)  # a count >= 1 or a duration; ValueError naming both forms
        every = self.experimental_host_call_every_n_steps
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"experimental_host_call_every_n_steps must be an integer >= 1, got {every!r}.")
        _check_positive("num_shards", self.num_shards)


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Where checkpoints and summaries go and how often, and which hardware runs the steps.

    `jit_compile=True` compiles every replica step with XLA, as a TPU would: a model that trains
    so on the CPU has static shapes and TPU-compatible ops.
    `train_distribute`/`eval_distribute` take any tf.distribute.Strategy; `cluster` a
    TPUClusterResolver and `master` a TPU name or address, as in TPUEstimator's RunConfig.
    When neither save_checkpoints_steps nor save_checkpoints_secs is set, checkpoints are
    saved every 600 seconds (tf.estimator's default) and at the end of every train().
    `save_input_position` (not in tf.estimator) saves with every checkpoint how many steps the train stream
    has fed (`estimators/input_position`, one int64 scalar), so a new process resumes the stream where it
    stopped (input_fn is called again and that many batches skipped); False: a new process starts the
    stream at its beginning, as tf.estimator did at every train().
    """

    model_dir: str | None = None
    tf_random_seed: int | None = None
    save_summary_steps: int = 100
    save_checkpoints_steps: int | None = None
    save_checkpoints_secs: float | None = None
    keep_checkpoint_max: int = 5
    log_step_count_steps: int = 100
    train_distribute: tf.distribute.Strategy | None = None
    eval_distribute: tf.distribute.Strategy | None = None
    cluster: Any = None
    master: str | None = None
    tpu_config: TPUConfig = dataclasses.field(default_factory=TPUConfig)
    session_config: Any = None
    jit_compile: bool = False
    save_input_position: bool = True

    def __post_init__(self) -> None:
        if self.save_checkpoints_steps is not None and self.save_checkpoints_secs is not None:
            raise ValueError(
                "Set at most one of save_checkpoints_steps and save_checkpoints_secs "
                f"(got {self.save_checkpoints_steps!r} and {self.save_checkpoints_secs!r})."
            )
        _check_positive("save_checkpoints_steps", self.save_checkpoints_steps)
        _check_positive("save_checkpoints_secs", self.save_checkpoints_secs)
        _check_positive("save_summary_steps", self.save_summary_steps)
        _check_positive("log_step_count_steps", self.log_step_count_steps)
        if not isinstance(self.keep_checkpoint_max, int) or self.keep_checkpoint_max < 0:
            raise ValueError(f"keep_checkpoint_max must be an integer >= 0, got {self.keep_checkpoint_max!r}.")
        if not isinstance(self.save_input_position, bool):
            raise ValueError(f"save_input_position must be True or False, got {self.save_input_position!r}.")
        if not isinstance(self.tpu_config, TPUConfig):
            raise ValueError(f"tpu_config must be a TPUConfig, got {type(self.tpu_config).__name__}.")
        for name in ("train_distribute", "eval_distribute"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tf.distribute.Strategy):
                raise ValueError(f"{name} must be a tf.distribute.Strategy, got {type(value).__name__}.")

    @property
    def checkpoint_every_secs(self) -> float | None:
        """Seconds between time-based checkpoints, or None when saving by steps."""
        if self.save_checkpoints_steps is not None:
            return None
        return self.save_checkpoints_secs if self.save_checkpoints_secs is not None else 600.0

    def replace(self, **kwargs: Any) -> RunConfig:
        """A copy with some fields changed (as tf.estimator.RunConfig.replace)."""
        return dataclasses.replace(self, **kwargs)
