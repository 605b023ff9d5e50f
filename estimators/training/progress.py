"""What happens between training loops: progress logs, TensorBoard scalars, and when to checkpoint."""

from __future__ import annotations

import time
from collections.abc import Callable

from estimators import log as logging


class CheckpointSchedule:
    """Due every `every_steps` global steps (crossing a multiple), or every `every_secs` seconds."""

    def __init__(self, step: int, every_steps: int | None, every_secs: float | None):
        self._every_steps, self._every_secs = every_steps, every_secs
        self.last_step, self._last_time = step, time.monotonic()

    def due(self, step: int) -> bool:
        if self._every_steps is not None:
            return step // self._every_steps > self.last_step // self._every_steps
        return time.monotonic() - self._last_time >= self._every_secs

    def saved(self, step: int) -> None:
        self.last_step, self._last_time = step, time.monotonic()


class ProgressReport:
    """Logs global step, loss, steps/sec and examples/sec every `log_every` steps, and writes
    global_step/sec and examples/sec scalars every `summary_every` steps (between loops)."""

    def __init__(self, step: int, log_every: int, summary_every: int, global_batch: int | None,
                 write_scalars: Callable[[int, dict], None] | None, log: Callable[..., None] = logging.info):
        self._log_every, self._summary_every = log_every, summary_every
        self._global_batch = global_batch
        self._write_scalars = write_scalars
        self._log = log
        self._logged_step, self._logged_time = step, time.monotonic()
        self._summary_step = step

    def after_loop(self, step: int, steps_run: int, seconds: float, loss: float, learning_rate: float | None,
                   final: bool) -> None:
        """Called after each compiled loop with what it did."""
        if step - self._logged_step >= self._log_every or final:
            now = time.monotonic()
            rate = (step - self._logged_step) / max(now - self._logged_time, 1e-9)
            extra = f", examples/sec = {rate * self._global_batch:.1f}" if self._global_batch else ""
            self._log("global_step = %d, loss = %.6g, steps/sec = %.3f%s", step, loss, rate, extra)
            self._logged_step, self._logged_time = step, now
        if self._write_scalars and (step - self._summary_step >= self._summary_every or final):
            rate = steps_run / max(seconds, 1e-9)
            values = {"global_step/sec": rate}  # loss and learning_rate are written inside the steps
            if self._global_batch:
                values["examples/sec"] = rate * self._global_batch
            self._write_scalars(step, values)
            self._summary_step = step
