"""StepClock: wall-clock marks at the end of every execution, and the one window definition.

Every contender marks (steps done so far, time.time()) right after an execution of K steps has
finished and its loss has been read on the host. The timed window is then the same for all:
from the mark at `warmup` steps to the mark at `warmup + timed` steps. Time to first step is
from the parent's spawn time (time.time() just before it started the child) to the first mark.
"""

from __future__ import annotations

import time


class StepClock:
    """Collects (steps_done, wall_time) marks for one child run."""

    def __init__(self, spawn_time: float):
        self.spawn_time = spawn_time
        self.marks: list[tuple[int, float]] = []

    def mark(self, steps_done: int, at: float | None = None) -> None:
        """Records that `steps_done` steps have finished (now, or at wall time `at`)."""
        self.marks.append((int(steps_done), time.time() if at is None else float(at)))

    def first_step_seconds(self) -> float:
        """Spawn of the process -> end of its first execution (compilation included)."""
        if not self.marks:
            raise RuntimeError("no execution finished")
        return self.marks[0][1] - self.spawn_time

    def seconds_between(self, start_steps: int, end_steps: int) -> float:
        """Wall time from the mark at `start_steps` to the mark at `end_steps`."""
        times = dict(self.marks)
        missing = [s for s in (start_steps, end_steps) if s not in times]
        if missing:
            seen = [s for s, _ in self.marks]
            raise RuntimeError(f"no mark at step(s) {missing}; marks at {seen[:5]}...{seen[-5:]}")
        return times[end_steps] - times[start_steps]

    def examples_per_sec(self, warmup: int, timed: int, batch_size: int) -> float:
        """Examples per second over the `timed` steps that follow the first `warmup` steps."""
        return timed * batch_size / self.seconds_between(warmup, warmup + timed)
