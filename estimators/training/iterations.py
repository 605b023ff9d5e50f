"""How many steps the next compiled loop runs: a fixed count, or as many as fit in a time budget.

TPUEstimator accepted `iterations_per_loop=N` or a duration such as "30s"; for a duration it ran
one step first, then sized each loop from the mean step time of the recent loops. A duration
keeps something on screen every so often however slow the steps are. Here a loop is sized by the
slower of the recent mean and the latest loop's step time: on a machine getting busier, the mean
lags behind and loops (and the gaps between progress lines) outgrow the duration. The first
one-step loop only probes: its time (a first step is slow: memory, caches, input warm-up) is
dropped from the mean once a real loop has been timed, or it keeps later loops too short; and as one
step is a poor estimate, the loop it sizes aims at half the duration.
"""

from __future__ import annotations

import collections
import math
import re

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds|m|min|mins|minutes|h|hr|hrs|hours)\s*$")
_UNIT_SECONDS = {"s": 1, "sec": 1, "secs": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60, "minutes": 60,
                 "h": 3600, "hr": 3600, "hrs": 3600, "hours": 3600}


def parse(value: int | str) -> tuple[int | None, float | None]:
    """(steps, None) for a count, (None, seconds) for a duration; ValueError naming the accepted forms."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"iterations_per_loop must be an integer >= 1, got {value}.")
        return value, None
    if isinstance(value, str):
        if value.strip().isdigit():
            return parse(int(value))
        match = _DURATION.match(value.lower())
        if match and float(match.group(1)) > 0:
            return None, float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    raise ValueError(
        f"iterations_per_loop must be a step count >= 1 or a duration such as '30s', '2m' or '1h', got {value!r}."
    )


class IterationsPerLoop:
    """The size of the next loop: the count, or (for a duration) what the recent step times say fits."""

    def __init__(self, value: int | str, window: int = 20):
        self.count, self.seconds = parse(value)
        self._step_times: collections.deque = collections.deque(maxlen=window)
        self._probe_timed = False  # the step times hold only a duration's first, one-step loop

    @property
    def single_step(self) -> bool:
        """A fixed count of 1: loops run without a loop (one step per call)."""
        return self.count == 1

    def next(self, remaining: float) -> int:
        """Steps for the next loop, at most `remaining`."""
        if self.count is not None:
            wanted = self.count
        elif not self._step_times:
            wanted = 1
        else:
            step_secs = self.step_seconds()
            # Sized by the probe's one step only, the first real loop aims at half the duration: one step
            # says little (measured under load: a 0.29 s probe, then 0.37 s steps, a 38 s silence for "30s").
            budget = self.seconds / 2 if self._probe_timed else self.seconds
            wanted = max(1, int(budget / step_secs)) if step_secs > 0 else 1
        return int(min(wanted, remaining)) if math.isfinite(remaining) else wanted

    def step_seconds(self) -> float:
        """The step time the next loop is sized by: the recent mean, or the latest loop's if slower (0: none yet)."""
        if not self._step_times:
            return 0.0
        return max(sum(self._step_times) / len(self._step_times), self._step_times[-1])

    def record(self, steps: int, seconds: float) -> None:
        """Feeds the time a loop of `steps` steps took."""
        if steps > 0 and seconds > 0:
            first = not self._step_times
            if self._probe_timed:
                self._step_times.clear()  # the probe's time gives way to the first real loop's
            self._probe_timed = self.count is None and steps == 1 and first
            self._step_times.append(seconds / steps)
