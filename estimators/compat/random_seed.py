"""RunConfig.tf_random_seed: what 2.15's graph-level seed did, for TF2 and Keras 3.

tf.estimator built a new graph for every train/evaluate/predict/export call and gave it the seed,
so two estimators with the same seed created identical variables (and unseeded tf.data shuffles
and random ops repeated). Here every such call runs under `seeded(seed)`: TensorFlow's global
seed and Keras's seeds (Keras 3 layers draw their initializer and dropout seeds from Python's
`random` when built; keras.utils.set_random_seed sets both). Python's and NumPy's own generators
are put back afterwards, so the user's streams between calls go on as if nothing happened
(2.15 never touched them).
"""

from __future__ import annotations

import contextlib
import functools
import random
from collections.abc import Callable, Iterator
from typing import Any

import keras
import numpy as np


@contextlib.contextmanager
def seeded(seed: int | None) -> Iterator[None]:
    """Within the block, TensorFlow and Keras start from `seed` (nothing changes when it is None)."""
    if seed is None:
        yield
        return
    python_state, numpy_state = random.getstate(), np.random.get_state()
    keras.utils.set_random_seed(int(seed))
    try:
        yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)


def seeded_entry_point(method: Callable) -> Callable:
    """An Estimator method run under `seeded(self.config.tf_random_seed)`, as 2.15 seeded each call's graph."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with seeded(self.config.tf_random_seed):
            return method(self, *args, **kwargs)

    return run


_END = object()


def seeded_generator(method: Callable) -> Callable:
    """A generator method (predict) whose first item, when model_fn is traced, is made under the seed."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Iterator:
        items = method(self, *args, **kwargs)
        with seeded(self.config.tf_random_seed):
            first = next(items, _END)
        if first is _END:
            return
        yield first
        yield from items

    return run
