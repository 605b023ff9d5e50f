"""RunConfig.tf_random_seed: what 2.15's graph-level seed did, for TF2 and Keras 3.

tf.estimator built a new graph for every train/evaluate/predict/export call and gave it the seed,
so two estimators with the same seed created identical variables (and unseeded tf.data shuffles
and random ops repeated). Here every such call runs under `seeded(seed)`: TensorFlow's global seed
(tf.random.set_seed; in eager execution TensorFlow keeps one for the whole process, so it is
TensorFlow's for the length of the call and put back afterwards, its op-seed stream included), and
Keras's seeds: Keras 3 layers (and tf_keras's) draw their initializer and dropout seeds from Python's
`random` when built, so while the call runs Keras's reference to that module answers the engine's
threads (the calling one, and replica threads inside model_fn calls) from a private `random.Random(seed)`
and every other thread from Python's own stream. Python's and NumPy's global streams are never
seeded or drawn from by the engine: another thread's draws during train() are its own, as with
2.15, which seeded its own graph and never touched them. An unseeded call (RunConfig's default) replaces
nothing: Keras's reference stays Python's `random` module.
"""

from __future__ import annotations

import contextlib
import functools
import random
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf
from keras.src.backend.common import global_state
from keras.src.random.seed_generator import GLOBAL_SEED_GENERATOR
from keras.src.utils.rng_utils import GLOBAL_RANDOM_SEED

from estimators.compat import scoped_patches
from estimators.compat.call_context import current_call
from estimators.compat.scoped_patches import engine_call

_local = threading.local()  # .streams: the private streams of the seeded calls running on this thread
_streams: list[random.Random] = []  # every seeded call's stream, newest last (replica threads take the newest)
_streams_lock = threading.Lock()
# Where Keras keeps its reference to Python's `random` module: (module name, attribute).
_KERAS_RANDOM = (("keras.src.random.seed_generator", "python_random"), ("tf_keras.src.backend", "random"))


class _EngineRandom:
    """Stands for the `random` module in Keras while seeded calls run: the engine's threads draw from the
    call's private stream, every other thread from Python's own."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_stream_here() or random, name)


def _stream_here() -> random.Random | None:
    """The seeded stream of the engine call this thread works for, or None (another thread's own code)."""
    own = getattr(_local, "streams", None)
    if own:
        return own[-1]
    # A MirroredStrategy replica thread inside model_fn: its engine call seeded the thread that started it.
    if current_call() is not None and type(threading.current_thread()).__name__ == "_MirroredReplicaThread":
        with _streams_lock:
            return _streams[-1] if _streams else None
    return None


_ENGINE_RANDOM = _EngineRandom()


def route_keras_random() -> None:
    """While a seeded call runs, Keras's `random` references answer from the engine's streams until the outermost
    engine call ends (run by `seeded` and, for a tf_keras imported inside model_fn, with the guards at each engine
    call). Without a seed nothing is replaced: Keras draws from Python's `random` as it always does."""
    if not _streams:
        return
    for module_name, attribute in _KERAS_RANDOM:
        module = sys.modules.get(module_name)
        if module is not None and vars(module).get(attribute) is random:
            scoped_patches.replace(module, attribute, _ENGINE_RANDOM)


@contextlib.contextmanager
def seeded(seed: int | None) -> Iterator[None]:
    """Within the block, TensorFlow and Keras start from `seed` (nothing changes when it is None)."""
    if seed is None:
        yield
        return
    stream = random.Random(int(seed))
    tf_state, keras_state = _tf_global_seed_state(), _keras_seed_state()
    with engine_call():
        own = getattr(_local, "streams", None)
        if own is None:
            own = _local.streams = []
        own.append(stream)
        with _streams_lock:
            _streams.append(stream)
        route_keras_random()
        # What keras.utils.set_random_seed does, but Python's and NumPy's global streams: Keras's state is per thread.
        global_state.set_global_attribute(GLOBAL_RANDOM_SEED, int(seed))
        global_state.set_global_attribute(GLOBAL_SEED_GENERATOR, None)
        tf.random.set_seed(int(seed))
        try:
            yield
        finally:
            own.remove(stream)
            with _streams_lock:
                _streams.remove(stream)
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
    """An Estimator entry point (train, evaluate, export) run under `seeded(self.config.tf_random_seed)`, as 2.15
    seeded each call's graph, and with the engine's guards installed for its length (compat/scoped_patches.py:
    one installation for all the model_fn calls it makes, taken away when it returns)."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with engine_call(), seeded(self.config.tf_random_seed):
            return method(self, *args, **kwargs)

    return run


_END = object()


def seeded_generator(method: Callable) -> Callable:
    """A generator method (predict) whose first item, when model_fn is traced, is made under the seed and with the
    guards installed (never held across a yield: the caller's code runs between items; the model_fn calls of
    later items install them for themselves, compat/call_context.py)."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Iterator:
        items = method(self, *args, **kwargs)
        with engine_call(), seeded(self.config.tf_random_seed):
            first = next(items, _END)
        if first is _END:
            return
        yield first
        yield from items

    return run
