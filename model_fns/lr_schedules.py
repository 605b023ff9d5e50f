"""Learning-rate schedules for the built-in models: constant, step or cosine, after a linear warmup.

A Keras LearningRateSchedule is evaluated by the optimizer at its own step counter inside the
compiled train step, so the rate is the same function of the step on the CPU, GPUs and a TPU.

    warmup(s)   = s / warmup_steps while s < warmup_steps, else 1
    constant(s) = base
    step(s)     = base * 0.1 ** (number of boundaries b with s > b), b = train_steps // 2, 3 * train_steps // 4
    cosine(s)   = base * (1 + cos(pi * p)) / 2, p = clip((s - warmup_steps) / (train_steps - warmup_steps), 0, 1)
    rate(s)     = warmup(s) * schedule(s)
"""

from __future__ import annotations

import math

import keras
import tensorflow as tf

__all__ = ["SCHEDULES", "WarmupSchedule", "step_boundaries"]

SCHEDULES = ("constant", "step", "cosine")
STEP_FACTOR = 0.1  # He et al. 2016: "divide it by 10 at 32k and 48k iterations" of 64k


def step_boundaries(train_steps: int) -> tuple[int, int]:
    """The steps after which "step" divides the rate by 10: 50% and 75% of training (at least 1 and 2)."""
    return max(1, train_steps // 2), max(2, train_steps * 3 // 4)


def _positive_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {kind} for the learning rate schedule, got {value!r}.")
    return value


@keras.saving.register_keras_serializable(package="model_fns")
class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """rate(step) = warmup(step) * schedule(step): see the module docstring for the formulas."""

    def __init__(self, base: float, schedule: str = "constant", train_steps: int | None = None,
                 warmup_steps: int = 0):
        if schedule not in SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {list(SCHEDULES)}, got {schedule!r}.")
        warmup_steps = _positive_int("warmup_steps", warmup_steps, 0)
        if schedule != "constant" or warmup_steps:
            train_steps = _positive_int("train_steps", train_steps, 1)
            if warmup_steps >= train_steps:
                raise ValueError(
                    f"warmup_steps ({warmup_steps}) must be less than train_steps ({train_steps}): the warmup "
                    "would never finish."
                )
        if not (isinstance(base, (int, float)) and math.isfinite(base) and base >= 0):
            raise ValueError(f"learning_rate must be a finite number >= 0, got {base!r}.")
        self.base = float(base)
        self.schedule = schedule
        self.train_steps = train_steps
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        rate = tf.constant(self.base, tf.float32)
        if self.schedule == "step":
            for boundary in step_boundaries(self.train_steps):
                rate = tf.where(step > boundary, rate * STEP_FACTOR, rate)
        elif self.schedule == "cosine":
            span = float(self.train_steps - self.warmup_steps)
            progress = tf.clip_by_value((step - self.warmup_steps) / span, 0.0, 1.0)
            rate = rate * 0.5 * (1.0 + tf.cos(math.pi * progress))
        if self.warmup_steps:
            rate = rate * tf.minimum(step / self.warmup_steps, 1.0)
        return rate

    def get_config(self) -> dict:
        return {"base": self.base, "schedule": self.schedule, "train_steps": self.train_steps,
                "warmup_steps": self.warmup_steps}
