"""TF1 graph collections as a model_fn call sees them: its own variables, update ops and losses.

TF1 code reads `tf.compat.v1.trainable_variables()`, `GraphKeys.UPDATE_OPS` (BatchNorm),
`REGULARIZATION_LOSSES` and `GLOBAL_STEP` from the graph. Under MirroredStrategy every replica
calls model_fn in its own thread on the *same* graph, and the threads take turns at merge_call
points in the middle of model_fn, so these collections are kept per thread while a call runs:
each replica sees exactly what its own model_fn call added.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import tensorflow as tf

_KEYS = tf.compat.v1.GraphKeys
# Collections a model_fn call owns; everything else stays shared by the graph as usual.
CALL_COLLECTIONS = frozenset({
    _KEYS.GLOBAL_VARIABLES, _KEYS.TRAINABLE_VARIABLES, _KEYS.TRAINABLE_RESOURCE_VARIABLES,
    _KEYS.MODEL_VARIABLES, _KEYS.LOCAL_VARIABLES, _KEYS.METRIC_VARIABLES, _KEYS.MOVING_AVERAGE_VARIABLES,
    _KEYS.UPDATE_OPS, _KEYS.REGULARIZATION_LOSSES, _KEYS.LOSSES, _KEYS.GLOBAL_STEP, _KEYS.SUMMARIES,
    # tf.compat.v1.get_variable's variable store and variable-scope names: fresh in every call, so
    # get_variable / variable_scope code runs again in retraces, replicas and modes (the engine's
    # store hands it the variables by name) and scope names are uniquified per call, as in a new graph.
    ("__variable_store",), ("__varscope",),
})


class _PerThreadCollections(dict):
    """A graph's `_collections` dict whose call-owned keys resolve to the current thread's lists."""

    def __init__(self, shared: dict):
        super().__init__(shared)
        self._local = threading.local()

    def _own(self) -> dict | None:
        return getattr(self._local, "collections", None)

    def _routes(self, key: Any) -> bool:
        return key in CALL_COLLECTIONS and self._own() is not None

    def __contains__(self, key: Any) -> bool:
        return key in self._own() if self._routes(key) else super().__contains__(key)

    def __getitem__(self, key: Any) -> Any:
        return self._own()[key] if self._routes(key) else super().__getitem__(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        if self._routes(key):
            self._own()[key] = value
        else:
            super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        if self._routes(key):
            del self._own()[key]
        else:
            super().__delitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._own().get(key, default) if self._routes(key) else super().get(key, default)

    def __iter__(self) -> Iterator:
        own = self._own()
        shared = [k for k in super().__iter__() if own is None or k not in CALL_COLLECTIONS]
        return iter(shared + (list(own) if own is not None else []))

    def keys(self):  # noqa: D102 - dict API
        return list(iter(self))


def _per_thread(graph: tf.Graph) -> _PerThreadCollections:
    collections = graph._collections  # noqa: SLF001 - the one place the engine reaches into Graph
    if not isinstance(collections, _PerThreadCollections):
        with graph._lock:  # noqa: SLF001
            collections = graph._collections  # noqa: SLF001
            if not isinstance(collections, _PerThreadCollections):
                collections = _PerThreadCollections(collections)
                graph._collections = collections  # noqa: SLF001
    return collections


class CallCollections:
    """The collections of one model_fn call; variables are added as the engine hands them out."""

    def __init__(self, lists: dict):
        self._lists = lists

    def add(self, keys: Iterable[str], value: Any) -> None:
        """Adds `value` to each collection once (a variable is handed out once per use)."""
        for key in keys:
            items = self._lists.setdefault(key, [])
            if not any(item is value for item in items):
                items.append(value)

    def get(self, key: str) -> list:
        return list(self._lists.get(key, []))


@contextlib.contextmanager
def call_collections(global_step: Any) -> Iterator[CallCollections]:
    """Within the block, this thread's call-owned collections start empty (global step aside)."""
    collections = _per_thread(tf.compat.v1.get_default_graph())
    previous = collections._own()  # noqa: SLF001
    lists: dict = {}
    if global_step is not None:
        lists[_KEYS.GLOBAL_STEP] = [global_step]
    collections._local.collections = lists  # noqa: SLF001
    try:
        yield CallCollections(lists)
    finally:
        collections._local.collections = previous  # noqa: SLF001
