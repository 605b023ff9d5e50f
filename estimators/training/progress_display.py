"""Progress people can read: a live one-line bar on a terminal, a plain line every ~30 s elsewhere.

Pure Python (no TensorFlow): the train, evaluate and predict loops hand it numbers they already
have (step, loss, examples/sec, metrics); it decides how and when to show them, and the ETA.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TextIO

from estimators.path_choice import GraphPathNeeded

__all__ = ["DisplayOptions", "ProgressDisplay", "configure", "expecting", "format_duration", "options"]

PHASES = ("train", "evaluate", "predict")


@dataclasses.dataclass(frozen=True)
class DisplayOptions:
    """How displays made from now on behave (main.py sets them from --verbosity).

    enabled: False makes every display a no-op. stream: where to write (None: sys.stderr when
    writing). live: redraw one line with carriage returns (None: when the stream is a terminal).
    interval_secs / every_updates: when not live, a line at the first update, then at each update
    after which waiting for the next one would likely pass this many seconds since the last line
    (the next update is expected as long after this one as this one came after the one before), or
    (if set) this many updates after the last line. So loops sized to the interval that end a
    little early each print (not every other one: a minute of silence), and short loops print
    about every interval.
    """

    enabled: bool = True
    stream: TextIO | None = None
    live: bool | None = None
    interval_secs: float = 30.0
    every_updates: int | None = None


_options = DisplayOptions()


def configure(**changes) -> DisplayOptions:
    """Changes the defaults of displays made from now on; returns the previous options."""
    global _options
    previous = _options
    _options = dataclasses.replace(_options, **changes)
    return previous


def options() -> DisplayOptions:
    """The options displays made now would get."""
    return _options


_expected: dict[str, int] = {}  # phase -> the total a caller that knows the data size expects


@contextlib.contextmanager
def expecting(phase: str, total: int | None) -> Iterator[None]:
    """Within the block, displays of `phase` made without a total take `total` (and so show an ETA).

    The engine evaluates "until the input ends" and predicts an unknown number of examples; a
    caller that knows its data (main.py: 10,000 test images, 10 batches of 1,000) says so here.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {list(PHASES)}, got {phase!r}.")
    previous = _expected.get(phase)
    if total is not None:
        _expected[phase] = int(total)
    try:
        yield
    finally:
        if previous is None:
            _expected.pop(phase, None)
        else:
            _expected[phase] = previous


def format_duration(seconds: float) -> str:
    """4.2s, 42s, 4m21s, 1h02m."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def _number(value: float) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _rate(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _is_tty(stream: TextIO) -> bool:
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # closed or detached stream
        return False


class _ClearLineFilter(logging.Filter):
    """Clears the live line before a log record is written, so the record starts on a clean line."""

    def __init__(self, display: ProgressDisplay):
        super().__init__()
        self._display = display

    def filter(self, record: logging.LogRecord) -> bool:
        self._display._clear_live_line()
        return True


class ProgressDisplay:
    """One phase's progress: `compiled(s)` once, `update(step, ...)` per loop, `close()` at the end.

    total: the step the phase ends at (None when unknown, e.g. evaluating until the input ends).
    start: the step it starts from (a resumed run starts where the checkpoint left off).
    Usable as a context manager: leaving the block closes it (saying where it stopped on an error).
    """

    def __init__(self, phase: str, total: int | None = None, *, start: int = 0, unit: str = "steps",
                 opts: DisplayOptions | None = None, clock: Callable[[], float] = time.monotonic):
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {list(PHASES)}, got {phase!r}.")
        self.phase, self.unit = phase, unit
        self.total = total if total is not None else _expected.get(phase)
        self._opts = opts or _options
        self._clock = clock
        self._started = clock()
        self._start_step = self._step = start
        self._compile_secs = 0.0
        self._first: tuple[int, float] | None = None  # (step, time) of the first update
        self._loss: float | None = None
        self._examples_per_sec: float | None = None
        self._metrics: dict[str, float] = {}
        self._last_line_time = self._started
        self._last_update_time = self._started
        self._updates_since_line = 0
        self._live_width = 0
        self._filter: _ClearLineFilter | None = None
        self._closed = False
        self._shown = False  # anything written yet: an error before that is not this phase's to report

    # -- what the loops call ------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return self._opts.enabled and not self._closed

    @property
    def live(self) -> bool:
        return self._opts.live if self._opts.live is not None else _is_tty(self._stream())

    def compiling(self) -> None:
        """Says the step function is being compiled (the first loop takes longer than the rest)."""
        if not self.enabled:
            return
        message = f"{self.phase}: compiling the step function..."
        if self.live:
            self._draw(message)
        else:
            self._write_line(message)

    def compiled(self, seconds: float) -> None:
        """A permanent line "<phase> step function compiled in 4.2 s"; the time is left out of the ETA."""
        self._compile_secs += max(float(seconds), 0.0)
        if self.enabled:
            self.note(f"{self.phase} step function compiled in {seconds:.1f} s")

    def update(self, step: int, loss: float | None = None, examples_per_sec: float | None = None,
               metrics: Mapping[str, float] | None = None) -> None:
        """The state after a loop: global step, its loss, examples/sec and any other scalar metrics."""
        now = self._clock()
        since_update, self._last_update_time = now - self._last_update_time, now
        self._step = int(step)
        first = self._first is None
        if first:
            self._first = (self._step, now)
        if loss is not None:
            self._loss = float(loss)
        if examples_per_sec is not None:
            self._examples_per_sec = float(examples_per_sec)
        if metrics:
            self._metrics.update({k: float(v) for k, v in metrics.items()})
        if not self.enabled:
            return
        self._updates_since_line += 1
        if self.live:
            self._draw(self._live_text(now))
            return
        every = self._opts.every_updates
        since_line = now - self._last_line_time
        if (first or since_line + since_update > self._opts.interval_secs
                or (every is not None and self._updates_since_line >= every)):
            self._write_line(self._plain_text(now))

    def note(self, text: str) -> None:
        """A permanent line (e.g. "saved checkpoint 500") that does not break the live bar."""
        if not self.enabled:
            return
        self._write_line(text)
        if self.live and self._first is not None:
            self._draw(self._live_text(self._clock()))

    def close(self, metrics: Mapping[str, float] | None = None) -> str | None:
        """Ends the live line and writes the summary line (returned too); later calls do nothing."""
        if self._closed:
            return None
        if metrics:
            self._metrics.update({k: float(v) for k, v in metrics.items()})
        line = self.summary()
        if self._opts.enabled:
            self._clear_live_line()
            self._write_line(line)
        self._closed = True
        self._remove_filter()
        return line

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
            return
        if self.enabled:
            self._clear_live_line()
        # Not for a call refused before it started (another trainer holds model_dir, bad input): "stopped
        # at 3009/100000 steps after 0.0s" would read as a run that began; nor when the graph path goes on.
        if self.enabled and self._shown and not issubclass(exc_type, GraphPathNeeded):
            self._write_line(f"{self.phase}: stopped at {self._position()} after "
                             f"{format_duration(self._clock() - self._started)}")
        self._closed = True
        self._remove_filter()

    # -- what it shows ------------------------------------------------------------------------
    def steps_per_sec(self, now: float | None = None) -> float | None:
        """Steps/sec since the first update, or (training) since the start less compile time before a second.

        Evaluation and prediction trace their step inside their first batch, and no compile time is
        reported for them: a rate from the start would make the first ETA several times too long.
        """
        now = self._clock() if now is None else now
        if self._first is not None and self._step > self._first[0] and now > self._first[1]:
            return (self._step - self._first[0]) / (now - self._first[1])
        if self.phase != "train" and not self._compile_secs:
            return None
        busy = now - self._started - self._compile_secs
        if self._step > self._start_step and busy > 0:
            return (self._step - self._start_step) / busy
        return None

    def eta_secs(self, now: float | None = None) -> float | None:
        if self.total is None:
            return None
        rate = self.steps_per_sec(now)
        if not rate:
            return None
        return max(self.total - self._step, 0) / rate

    def summary(self) -> str:
        """"train: 600/600 steps in 3m12s (compile 4.2s), 3.12 steps/sec, 412 examples/sec, loss 0.2376"."""
        elapsed = self._clock() - self._started
        parts = [f"{self.phase}: {self._position()} in {format_duration(elapsed)}"]
        if self._compile_secs:
            parts[0] += f" (compile {format_duration(self._compile_secs)})"
        done = self._step - self._start_step
        busy = elapsed - self._compile_secs
        if done > 0 and busy > 0:
            parts.append(f"{_rate(done / busy)} {self.unit}/sec")
        parts.extend(self._values())
        return ", ".join(parts)

    def _position(self) -> str:
        if self.total is None:
            return f"{self._step} {self.unit}"
        return f"{self._step}/{self.total} {self.unit}"

    def _values(self) -> list[str]:
        values = []
        if self._examples_per_sec is not None:
            values.append(f"{_rate(self._examples_per_sec)} examples/sec")
        if self._loss is not None:
            values.append(f"loss {_number(self._loss)}")
        values.extend(f"{name} {_number(value)}" for name, value in self._metrics.items())
        return values

    def _fraction(self) -> float | None:
        if not self.total:
            return None
        span = self.total - self._start_step
        done = self._step - self._start_step
        return min(max(done / span, 0.0), 1.0) if span > 0 else 1.0

    def _plain_text(self, now: float) -> str:
        if self.unit == "steps":
            position = f"step {self._step}" + (f"/{self.total}" if self.total is not None else "")
        else:  # "evaluate: 3/10 batches", "predict: 1280/10000 examples"
            position = self._position()
        fraction = self._fraction()
        if fraction is not None:
            position += f" ({fraction:.0%})"
        parts = [f"{self.phase}: {position}", *self._values()]
        eta = self.eta_secs(now)
        if eta is not None:
            parts.append(f"ETA {format_duration(eta)}")
        return ", ".join(parts)

    def _live_text(self, now: float) -> str:
        width = max(shutil.get_terminal_size((100, 24)).columns - 1, 20)
        fraction = self._fraction()
        tail = [self._position()]
        if fraction is not None:
            tail[0] += f" {fraction:4.0%}"
        tail.extend(self._values())
        eta = self.eta_secs(now)
        if eta is not None:
            tail.append(f"ETA {format_duration(eta)}")
        text = " | ".join(tail)
        room = width - len(self.phase) - len(text) - 4
        if fraction is not None and room >= 10:
            bar_width = min(room, 30)
            filled = int(fraction * bar_width)
            return f"{self.phase} [{'#' * filled}{'.' * (bar_width - filled)}] {text}"
        return f"{self.phase} {text}"[:width]

    # -- writing --------------------------------------------------------------------------------
    def _stream(self) -> TextIO:
        return self._opts.stream if self._opts.stream is not None else sys.stderr

    def _draw(self, text: str) -> None:
        """Redraws the live line: carriage return, the text, spaces over what the last one left."""
        stream = self._stream()
        stream.write("\r" + text + " " * max(self._live_width - len(text), 0))
        stream.flush()
        self._live_width = len(text)
        self._shown = True
        self._add_filter()

    def _clear_live_line(self) -> None:
        if self._live_width:
            stream = self._stream()
            stream.write("\r" + " " * self._live_width + "\r")
            stream.flush()
            self._live_width = 0

    def _write_line(self, text: str) -> None:
        self._clear_live_line()
        stream = self._stream()
        stream.write(text + "\n")
        stream.flush()
        self._shown = True
        self._last_line_time = self._clock()
        self._updates_since_line = 0

    def _add_filter(self) -> None:
        """While a live line shows, log records clear it before they are written."""
        if self._filter is None:
            self._filter = _ClearLineFilter(self)
            for handler in logging.getLogger().handlers:
                handler.addFilter(self._filter)

    def _remove_filter(self) -> None:
        if self._filter is not None:
            for handler in logging.getLogger().handlers:
                handler.removeFilter(self._filter)
            self._filter = None
