"""tf.distribute input iterators are freed by refcounting between engine calls, never by the cycle collector.

A dead estimator is cyclic garbage, and so is everything only it references. When Python's cycle
collector frees a tf.distribute input iterator that way, TensorFlow can block in the iterator's
destructor for minutes (measured here: 40 to 200 s, the collecting thread waiting on a prefetch
thread); freed by refcounting outside the collector, the same iterator goes in milliseconds. So an
estimator hands its iterator to `keep_until_safe` from a finalizer (which runs when the estimator
dies, before the collector tears anything down, and keeps the iterator reachable), and every engine
call first collects (when the program has automatic collection on and a collection is due, below), then
drops what was kept.

Python's collector itself is left as the program set it: engine calls used to switch automatic
collection off for their whole length, process-wide (other threads, hooks and user callbacks
included). That pause dates from before the finalizer above; since then the cycle collector never
frees an engine iterator (it only ever sees a Held that the finalizer keeps alive), so the pause
protected nothing of the engine's; nor did it buy speed: a small CNN's train (compile, 200 steps) and
two evaluations, whole process, side by side, took 0.99x the CPU time without it (median of 4 pairs).

Even freed by refcounting, a multi-device iterator's destructor can wait on a tf.data autotune thread
for seconds to minutes (measured here: up to 191 s, 8 logical CPUs), with the GIL released. So the
iterators the engine is done with go to a background thread that frees them (`free_in_background`):
training or the next evaluation goes on meanwhile. Those threads are not daemons, so the interpreter
waits for them at exit instead of ending one inside TensorFlow's destructor (a daemon thread that
comes back from TensorFlow while the interpreter is finalising is ended by pthread_exit inside C++
frames: "FATAL: exception not rethrown", the process aborts; seen here in 2 of 7 exits).

A process must still end within seconds of its last call: a finished pytest process once waited
~343 s here for such a thread. The wait itself is gone at its root (compat/device_iterators.py:
the per-device iterators run no autotuning thread, and are freed in 0.01-0.1 s), and at exit
(`_at_exit`) the iterators still held (a live estimator's train stream, an unfinished prediction)
are leaked, never freed: module teardown would otherwise free them in the main thread, and the
memory goes back with the process anyway.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any


class Held:
    """Holds the only reference to an object (an input iterator), so free_in_background can take it away."""

    __slots__ = ("value", "__weakref__")

    def __init__(self, value: Any = None) -> None:
        self.value = value
        _held.add(self)


_held: weakref.WeakSet[Held] = weakref.WeakSet()  # every Held alive: what _at_exit leaks
_kept: list[Held] = []


def keep_until_safe(held: Held) -> None:
    """Keeps `held` alive until the next engine call frees its value (outside the cycle collector)."""
    _kept.append(held)


def release_kept() -> None:
    """Frees the values keep_until_safe kept, in the background."""
    while True:
        try:
            held = _kept.pop()
        except IndexError:  # empty, or another thread took the last one
            return
        free_in_background(held)


def free_in_background(held: Held) -> None:
    """Moves held.value to a new thread that drops it; returns at once, with held.value None.

    One thread per value, so a value is never queued behind another's slow destructor. The caller
    must hold no other reference, or the last one it drops frees the value in its own thread.
    """
    if held.value is None:
        return
    box = [held.value]  # from here on the box holds the only reference; the thread empties it
    held.value = None
    threading.Thread(target=box.clear, name="estimators-iterator-reaper").start()


@contextlib.contextmanager
def safe_point(collect_first: bool = False) -> Iterator[None]:
    """With collect_first: collects when due (`_collection_due`; a dead estimator's finalizer then keeps its
    iterator) and frees kept iterators in the background. The collector's own state (enabled, thresholds,
    frozen objects) is never changed."""
    if collect_first:
        if _collection_due():
            _collect()
        release_kept()
    yield


# A full collection's cost grows with the objects a process holds: 0.3 s a call in a test process, where
# collecting at every engine call took a sixth of the time. One is due when either
# - COLLECT_SPACING times the last one's cost (its CPU time in this thread, at most MAX_COST_S: a finalizer
#   that waits does not count) has passed since it ended: at most ~5% of the time; a program's first engine
#   call, and calls minutes apart such as train_and_evaluate's evaluations, always collect; or
# - COLLECT_AFTER_NEW_ENGINES more estimators are alive or awaiting collection than the last one left: a sweep
#   of short-lived estimators holds at most a few dead ones' iterators, variables and device memory.
COLLECT_SPACING = 20.0
MAX_COST_S = 1.0
COLLECT_AFTER_NEW_ENGINES = 4
_engines: weakref.WeakSet = weakref.WeakSet()  # every estimator not yet freed (dead ones until a collection)
_last_collection = {"end": float("-inf"), "cost": 0.0, "engines": 0}
_clock, _cpu_clock, _full_collection = time.monotonic, time.thread_time, gc.collect  # the tests' seams


def track(engine: object) -> None:
    """Counts `engine` (an estimator) until it is freed, for `_collection_due`."""
    _engines.add(engine)


def _collection_due() -> bool:
    """Whether the program collects garbage automatically and a collection is due by the rules above."""
    if not gc.isenabled():
        return False
    engines = len(_engines)  # len, not iteration: other threads may add meanwhile
    last = _last_collection
    last["engines"] = min(last["engines"], engines)  # some were freed without a collection: count from there
    if engines - last["engines"] >= COLLECT_AFTER_NEW_ENGINES:
        return True
    return _clock() - last["end"] >= COLLECT_SPACING * last["cost"]


def _collect() -> None:
    cpu = _cpu_clock()
    _full_collection()
    cost = min(_cpu_clock() - cpu, MAX_COST_S)
    _last_collection.update(end=_clock(), cost=cost, engines=len(_engines))


def _at_exit() -> None:
    """Leaks every value still held: its destructor never runs (not in the main thread at teardown either)."""
    for held in list(_held):
        if held.value is not None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(held.value))  # a reference never dropped
            held.value = None
    _kept.clear()


atexit.register(_at_exit)
