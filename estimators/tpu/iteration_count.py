"""How many steps fit in a time budget, learnt from the loops already run (2.15's IterationCountEstimator).

TPUConfig(iterations_per_loop="30s") asks for loops of about thirty seconds. Each finished loop is
recorded as (seconds it took, steps it ran); `get(budget)` turns the mean step time of the recent
loops into a step count. The estimate is moved to the projected count after every loop, except when
the loops already take about the budget and the step time has settled: then it is kept, so the loop
size stops wobbling. With no sample yet (or only unusable ones) it answers one step.

2.15's TPUEstimator drove this from _TPUStopAtStepHook (estimators/tpu/stop_hook.py).
"""

from __future__ import annotations

import collections
import logging
from typing import NamedTuple

import numpy as np

_log = logging.getLogger("tensorflow")

# The step time counts as settled when its standard deviation over the window is under this (seconds).
_STABLE_STD_SECS = 0.03
# A loop counts as on budget within these percentages (the last loop, or the window's mean).
_LAST_RUNTIME_TOLERANCE_PCT = 10
_MEAN_RUNTIME_TOLERANCE_PCT = 5


class RuntimeCounter(NamedTuple):
    """One finished loop: its wall time, its step count and their ratio."""

    runtime_secs: float
    steps: int
    step_time_secs: float


class IterationCountEstimator:
    """Steps per loop for a time budget, from a window (`capacity` loops) of recent loop timings.

    A larger window smooths the estimate but follows changes in step time more slowly.
    """

    def __init__(self, capacity: int = 20):
        self._reset(capacity=capacity)

    def _reset(self, capacity: int = 20) -> None:
        """Forgets every sample and starts again with a window of `capacity` loops."""
        if capacity <= 0:
            raise ValueError(f"IterationCountEstimator `capacity` must be positive, got {capacity}.")
        self._capacity = capacity
        self._buffer_wheel: collections.deque[RuntimeCounter] = collections.deque()
        self._min_iterations = 1
        self._last_iterations: float = self._min_iterations
        self._sample_count = 0

    def _column_mean(self, column: int) -> float:
        return float(np.mean([sample[column] for sample in self._buffer_wheel])) if self._buffer_wheel else 0.0

    def _mean_runtime_secs(self) -> float:
        """Mean wall time of the loops in the window (0 when empty)."""
        return self._column_mean(0)

    def _mean_step_time_secs(self) -> float:
        """Mean seconds per step of the loops in the window (0 when empty)."""
        return self._column_mean(2)

    def _std_step_time_secs(self) -> float:
        """Standard deviation of the window's seconds per step (0 when empty)."""
        if not self._buffer_wheel:
            return 0.0
        return float(np.std([sample.step_time_secs for sample in self._buffer_wheel]))

    @staticmethod
    def _diff_less_than_percentage(actual: float, target: float, percentage: float) -> bool:
        """Whether `actual` is within `percentage` percent of `target` (both non-zero)."""
        if actual == 0:
            raise ValueError("Invalid `actual` value: it must not be zero.")
        if target == 0:
            raise ValueError("Invalid `target` value: it must not be zero.")
        return abs(target - actual) / float(target) <= percentage / 100.0

    def _is_step_time_stable(self) -> bool:
        """Settled: a small spread of step times, after more loops than the window holds."""
        return self._std_step_time_secs() < _STABLE_STD_SECS and self._sample_count > self._capacity

    def update(self, runtime_secs: float, count: int) -> None:
        """Records a loop of `count` steps that took `runtime_secs`; a sample without time or steps is dropped."""
        if runtime_secs <= 0 or count <= 0:
            _log.debug("IterationCountEstimator: dropped a sample of %s steps in %s s.", count, runtime_secs)
            return
        if len(self._buffer_wheel) >= self._capacity:
            self._buffer_wheel.popleft()
        self._buffer_wheel.append(RuntimeCounter(runtime_secs, count, float(runtime_secs) / count))
        self._sample_count += 1

    def get(self, total_secs: float) -> int:
        """Steps the next loop should run to take about `total_secs` (at least one)."""
        if total_secs <= 0:
            raise ValueError(f"Invalid `total_secs`: it must be a positive number, got {total_secs}.")
        if not self._buffer_wheel:
            return self._min_iterations
        last = self._buffer_wheel[-1]
        projected = total_secs / self._mean_step_time_secs()
        on_budget = (self._diff_less_than_percentage(last.runtime_secs, total_secs, _LAST_RUNTIME_TOLERANCE_PCT)
                     or self._diff_less_than_percentage(self._mean_runtime_secs(), total_secs,
                                                        _MEAN_RUNTIME_TOLERANCE_PCT))
        if not (on_budget and self._is_step_time_stable()):
            self._last_iterations = projected
        self._last_iterations = max(self._last_iterations, self._min_iterations)
        _log.info("IterationCountEstimator: budget %.3fs, last loop %.3fs, mean loop %.3fs, mean step %.3fs "
                  "(std %.3f): next loop %.2f steps.", total_secs, last.runtime_secs, self._mean_runtime_secs(),
                  self._mean_step_time_secs(), self._std_step_time_secs(), self._last_iterations)
        return int(self._last_iterations + 0.5)
