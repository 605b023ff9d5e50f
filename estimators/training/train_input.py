"""The training data stream across train() calls: continued while it has data, restarted once it ended.

A train() call continues the stream the previous call left (as one long call would: no shuffle
buffer refill, the next unseen batch) while it has data; once input_fn's data has ended, the
next call calls input_fn again and starts over, as a new epoch. When the estimator dies, its live
iterator is handed to runtime/collection.py, which frees it outside the cycle collector.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from estimators.runtime.collection import keep_until_safe


class _Stream:
    """The live iterator; referenced from outside its estimator's cycles, so dying with it never frees it."""

    def __init__(self) -> None:
        self.iterator: Any = None


class TrainInput:
    """One estimator's training iterator, its input_fn, and the batches taken from it so far."""

    def __init__(self, owner: object) -> None:
        self._input_fn: Callable | None = None
        self._stream = _Stream()
        self.position = 0  # steps taken from the current stream
        weakref.finalize(owner, keep_until_safe, self._stream)

    @property
    def _iterator(self) -> Any:
        return self._stream.iterator

    @_iterator.setter
    def _iterator(self, value: Any) -> None:
        self._stream.iterator = value

    def iterator(self, input_fn: Callable, make: Callable[[int], Any], resume_at: int = 0) -> Any:
        """The live iterator for input_fn, or a new one (another input_fn, or the stream ended).

        A new stream starts `resume_at` steps in (`make(resume_at)` skips them): the position a
        checkpoint recorded, so a resumed run sees what an uninterrupted one would have.
        """
        if self._iterator is None or self._input_fn is not input_fn:
            self._input_fn, self._iterator, self.position = input_fn, make(resume_at), resume_at
        return self._iterator

    def advanced(self, steps: int, ended: bool) -> None:
        """Records `steps` taken; `ended` when the stream ran out (the next train() starts over)."""
        self.position += steps
        if ended:
            self._iterator, self.position = None, 0
