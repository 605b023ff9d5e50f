"""TensorFlow and Keras attributes the engine replaces only while one of its calls runs, then puts back.

The TF2 path runs TF1-style model_fns in tf.functions, where every stateful op runs; its guards
(optimizer_guard.py: no optimizer update outside TRAIN; keras_updates.py: Keras 2's
`get_updates_for`; random_seed.py: Keras's seed draws from the engine's seeded stream;
device_iterators.py: per-device datasets without autotuning) replace methods of Keras's and
TensorFlow's classes, one tf.data function and Keras's reference to the `random` module. (Writes to
saved variables are guarded per variable by the variable store, compat/write_guard.py: no class.)
They are installed when the outermost engine call begins (train/evaluate/predict/export/preflight
work, and every model_fn call, which enters one itself) and the exact original attributes, or their
absence, are put back when it ends or raises: a program's own TensorFlow/Keras code before, between
and after engine calls runs on TensorFlow's own classes, as without this library. While installed,
each guard acts only inside a model_fn call (compat/call_context.py: this thread's call, or one
running in the graph being built), so another thread's code during train() is unaffected too.

The guards register their installers here (compat/guards.py), so this module imports none of them.
Reference-counted and thread-safe: overlapping engine calls (two estimators on two threads,
MirroredStrategy's replica threads each calling model_fn) share one installation.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

_ABSENT = object()  # what `original` is for an attribute that did not exist (added, later deleted)
_lock = threading.RLock()
_depth = 0  # engine calls running now, on any thread
_applied: list[_Patch] = []


@dataclass(frozen=True)
class _Patch:
    owner: Any  # a class or a module
    name: str
    original: Any  # owner's own attribute before (from its __dict__), or _ABSENT
    replacement: Any


def replace(owner: Any, name: str, replacement: Any) -> None:
    """Sets owner.name to `replacement` until the outermost engine call ends (installers, and a guard that an engine
    call turns on for itself: random_seed's, under a seed)."""
    with _lock:
        if _depth <= 0:
            raise RuntimeError(f"{name} may only be replaced inside an engine call (scoped_patches.engine_call).")
        original = vars(owner).get(name, _ABSENT)
        setattr(owner, name, replacement)
        _applied.append(_Patch(owner, name, original, replacement))


def _restore() -> None:
    """Puts every replaced attribute back, newest first; one replaced again since by someone else stays theirs."""
    while _applied:
        patch = _applied.pop()
        if vars(patch.owner).get(patch.name, _ABSENT) is not patch.replacement:
            continue
        if patch.original is _ABSENT:
            delattr(patch.owner, patch.name)
        else:
            setattr(patch.owner, patch.name, patch.original)


_installers: list[Callable[[], None]] = []  # each guard's install(), in the order compat/guards.py registers them


def register(install: Callable[[], None]) -> None:
    """Adds a guard's installer, run when the outermost engine call begins (compat/guards.py registers them all)."""
    if install not in _installers:
        _installers.append(install)


def _install() -> None:
    """Every registered guard, for the classes imported so far (idempotent: tf_keras may have been imported since)."""
    if not _installers:
        raise RuntimeError("No engine guards are registered: import estimators.compat.guards before an engine call.")
    for install in _installers:
        install()


def active() -> bool:
    """Whether an engine call is running now (on any thread), so the guards are installed."""
    return _depth > 0


@contextlib.contextmanager
def engine_call() -> Iterator[None]:
    """The guards installed for the block; the outermost block puts TensorFlow's and Keras's attributes back."""
    global _depth
    with _lock:
        _depth += 1
        try:
            _install()
        except BaseException:
            _leave()
            raise
    try:
        yield
    finally:
        with _lock:
            _leave()


def _leave() -> None:
    global _depth
    _depth -= 1
    if _depth == 0:
        _restore()
