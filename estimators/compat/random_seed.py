"""RunConfig.tf_random_seed: what 2.15's graph-level seed did, for TF2 and Keras 3.

tf.estimator built a new graph for every train/evaluate/predict/export call and gave it the seed,
so two estimators with the same seed created identical variables (and unseeded tf.data shuffles
and random ops repeated). Here every such call runs under `seeded(seed)`: TensorFlow's global
seed and Keras's seeds (Keras 3 layers draw their initializer and dropout seeds from Python's
`random` when built; keras.utils.set_random_seed sets both). Python's, NumPy's, TensorFlow's and
Keras's global seeds and streams are put back afterwards, so the user's streams between calls go
on as if nothing happened (2.15 seeded its own graph and never touched them).
"""

from __future__ import annotations

import contextlib
import functools
import random
from collections.abc import Callable, Iterator
from typing import Any

import keras
import numpy as np
from keras.src.backend.common import global_state
from keras.src.random.seed_generator import GLOBAL_SEED_GENERATOR
from keras.src.utils.rng_utils import GLOBAL_RANDOM_SEED


@contextlib.contextmanager
def seeded(seed: int | None) -> Iterator[None]:
    """Within the block, TensorFlow and Keras start from `seed` (nothing changes when it is None)."""
    if seed is None:
        yield
        return
    python_state, numpy_state = random.getstate(), np.random.get_state()
    tf_state, keras_state = _tf_global_seed_state(), _keras_seed_state()
    keras.utils.set_random_seed(int(seed))
    try:
        yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        _restore_tf_global_seed_state(tf_state)
        _restore_keras_seed_state(keras_state)


_MISSING = object()
_TF_SEED_ATTRS = ("_seed", "_rng")  # TF's eager context: the global seed and the op-seed generator it made
_KERAS_SEED_ATTRS = (GLOBAL_RANDOM_SEED, GLOBAL_SEED_GENERATOR)  # what keras.utils.set_random_seed sets


def _tf_global_seed_state() -> dict:
    from tensorflow.python.eager import context

    ctx = context.context()
    return {name: getattr(ctx, name, _MISSING) for name in _TF_SEED_ATTRS}


def _restore_tf_global_seed_state(state: dict) -> None:
    """The caller's global seed and op-seed stream, as before: 2.15 seeded its own graph, not the caller's."""
    from tensorflow.python.eager import context

    ctx = context.context()
    for name, value in state.items():
        if value is not _MISSING:
            setattr(ctx, name, value)
        elif hasattr(ctx, name):
            delattr(ctx, name)


def _keras_seed_state() -> dict:
    return {name: global_state.get_global_attribute(name) for name in _KERAS_SEED_ATTRS}


def _restore_keras_seed_state(state: dict) -> None:
    for name, value in state.items():
        global_state.set_global_attribute(name, value)


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
