"""The training data stream across train() calls: continued while it has data, restarted once it ended.

A train() call continues the stream the previous call left (as one long call would: no shuffle
buffer refill, the next unseen batch) while it has data; once input_fn's data has ended, the
next call calls input_fn again and starts over, as a new epoch. When the estimator dies, its live
iterator is handed to tf2/collection.py, which frees it outside the cycle collector.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from estimators.tf2.collection import Held, free_in_background, keep_until_safe


class TrainInput:
    """One estimator's training iterator, its input_fn, and the batches taken from it so far."""

    def __init__(self, owner: object) -> None:
        self._input_fn: Callable | None = None
        self._stream = Held()  # the live iterator, referenced from outside its estimator's cycles
        self.position = 0  # steps taken from the current stream
        weakref.finalize(owner, keep_until_safe, self._stream)

    @property
    def live(self) -> Any:
        """The live iterator (None before the first train() and once the stream ended).

        Callers use it and let go: this object holds the only lasting reference, so the iterator can
        be freed in the background when the stream ends or the estimator dies.
        """
        return self._stream.value

    def iterator(self, input_fn: Callable, make: Callable[[int], Any], resume_at: int = 0) -> Any:
        """The live iterator for input_fn, or a new one (another input_fn, or the stream ended).

        A new stream starts `resume_at` steps in (`make(resume_at)` skips them): the position a
        checkpoint recorded, so a resumed run sees what an uninterrupted one would have.
        """
        if self.live is None or self._input_fn is not input_fn:
            free_in_background(self._stream)
            self._input_fn, self._stream.value, self.position = input_fn, make(resume_at), resume_at
        return self.live

    def advanced(self, steps: int, ended: bool) -> None:
        """Records `steps` taken; `ended` when the stream ran out (the next train() starts over)."""
        self.position += steps
        if ended:
            free_in_background(self._stream)
            self.position = 0


class StartingOverAtItsEnd:
    """run_loop for one train() call: a continued stream found already at its end starts over at once.

    A stream whose data was used up exactly by earlier steps (or resumed at the position a checkpoint
    recorded after its last batch) yields no step; tf.estimator 2.15 called input_fn in every train(),
    so such a call starts input_fn's data over instead of ending without training.
    """

    def __init__(self, loop: Callable, train_input: TrainInput, input_fn: Callable,
                 make: Callable[[int], Any], stopping: Callable[[], bool]) -> None:
        self._loop, self._train_input = loop, train_input
        self._input_fn, self._make, self._stopping = input_fn, make, stopping
        self._first = True

    def __call__(self, iterations: int) -> Any:
        result = self._loop(self._train_input.live, iterations)
        if self._first and result.steps == 0 and self._train_input.position > 0 and not self._stopping():
            self._train_input.advanced(0, ended=True)
            result = self._loop(self._train_input.iterator(self._input_fn, self._make), iterations)
        self._first = False
        return result
