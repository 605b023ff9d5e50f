"""tf.distribute input iterators are freed by refcounting between engine calls, never by the cycle collector.

A dead estimator is cyclic garbage, and so is everything only it references. When Python's cycle
collector frees a tf.distribute input iterator that way, TensorFlow can block in the iterator's
destructor for minutes (measured here: 40 to 200 s, the collecting thread waiting on a prefetch
thread); freed by refcounting outside the collector, the same iterator goes in milliseconds. So an
estimator hands its iterator to `keep_until_safe` from a finalizer (which runs when the estimator
dies, before the collector tears anything down, and keeps the iterator reachable), and every engine
call first collects, then drops what was kept. Automatic collection stays off while the engine runs
TensorFlow, so no other garbage of this kind is freed mid-trace either.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

_kept: list = []


def keep_until_safe(obj: Any) -> None:
    """Keeps `obj` alive until the next engine call drops it (outside the cycle collector)."""
    _kept.append(obj)


def release_kept() -> None:
    """Drops what keep_until_safe kept: freed now, by refcounting."""
    while _kept:
        _kept.pop()


@contextlib.contextmanager
def paused_collection(collect_first: bool = False) -> Iterator[None]:
    """Optionally collects and releases kept objects now (a safe point), then keeps automatic collection off."""
    was_enabled = gc.isenabled()
    if collect_first:
        if was_enabled:
            gc.collect()
        release_kept()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
