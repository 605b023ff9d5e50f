"""Which model_fn call is running on this thread, and what it has created and applied so far.

Replicas call model_fn in their own threads (MirroredStrategy), so this is thread-local. The engine
enters a call around every model_fn invocation; TF1 helpers (collections, the global step, the
train-op guard, CrossShardOptimizer) and the variable store read it. Entering a call also installs
the guards for its duration (compat/scoped_patches.py; a no-op inside the engine call around it).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf

from estimators.compat import scoped_patches
from estimators.mode_keys import ModeKeys

_local = threading.local()
_by_graph: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph -> calls running in it (replicas)
_graph_lock = threading.Lock()


@dataclass
class AppliedOptimizer:
    """One optimizer update model_fn asked for: the optimizer and whether CrossShardOptimizer wrapped it."""

    optimizer: Any
    cross_shard: bool
    kind: str  # "keras", "tf_keras" or "v1"
    learning_rate: Any = None  # the rate this update uses, read before the update runs


@dataclass
class ModelFnCall:
    """What one model_fn call created and applied, read by the engine after the call."""

    mode: str
    num_replicas: int
    variables: list = field(default_factory=list)
    optimizers: list[AppliedOptimizer] = field(default_factory=list)
    names: Any = None  # the call's runtime.naming.CallNames
    collections: Any = None  # the call's compat.collections.CallCollections
    summaries: list = field(default_factory=list)  # tf.compat.v1.summary ops model_fn created
    read_only: bool = False  # reading v1 metric values: pruned to them, so no write of the call runs
    session_locals: list = field(default_factory=list)  # names of LOCAL_VARIABLES made outside tf.compat.v1.metrics
    train_metrics: dict = field(default_factory=dict)  # {name: (value x weight, weight)}: training/train_metrics.py

    @property
    def training(self) -> bool:
        return self.mode == ModeKeys.TRAIN

    @property
    def trainable_variables(self) -> list:
        return [v for v in self.variables if getattr(v, "trainable", False)]

    def applied(self, optimizer: Any, cross_shard: bool, kind: str, learning_rate: Any = None) -> None:
        """Records an optimizer update (once per optimizer; CrossShardOptimizer records its inner one first)."""
        if not any(entry.optimizer is optimizer for entry in self.optimizers):
            self.optimizers.append(AppliedOptimizer(optimizer, cross_shard, kind, learning_rate))


def current_call() -> ModelFnCall | None:
    """The model_fn call running on this thread, or None outside model_fn."""
    return getattr(_local, "call", None)


def call_in_graph() -> ModelFnCall | None:
    """This thread's model_fn call, else one running in the graph this thread builds: MirroredStrategy runs a
    replica's merge_call function (assign_moving_average, ...) on the main thread, in the replica's graph."""
    call = current_call()
    if call is None and _by_graph:
        active = _by_graph.get(tf.compat.v1.get_default_graph())
        call = active[-1] if active else None
    return call


@contextlib.contextmanager
def entered(call: ModelFnCall) -> Iterator[ModelFnCall]:
    """Makes `call` the current call on this thread, and in the graph being built, for the block.

    Only a graph being built (a tf.function's) is keyed: eager code shares one default graph across
    threads, so another thread's eager code is never taken for this call's.
    """
    previous = getattr(_local, "call", None)
    graph = None if tf.executing_eagerly() else tf.compat.v1.get_default_graph()
    with scoped_patches.engine_call():
        _local.call = call
        if graph is not None:
            with _graph_lock:
                _by_graph.setdefault(graph, []).append(call)
        try:
            yield call
        finally:
            _local.call = previous
            if graph is not None:
                with _graph_lock:
                    calls = _by_graph[graph]
                    calls.remove(call)
                    if not calls:
                        del _by_graph[graph]


@dataclass(frozen=True)
class OptimizerState:
    """Variable creation happening inside an optimizer's update (its state, never model weights; the variable store
    names a Keras 3 slot from the slot call itself, tf2/naming.keras_slot)."""

    optimizer: Any


def creating_optimizer_state() -> OptimizerState | None:
    """Set while an optimizer creates its variables (slots, step counters) on this thread."""
    stack = getattr(_local, "optimizer_state", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def optimizer_state(state: OptimizerState) -> Iterator[None]:
    """Marks variables created in the block as `state.optimizer`'s own (never model weights)."""
    stack = getattr(_local, "optimizer_state", None)
    if stack is None:
        stack = _local.optimizer_state = []
    stack.append(state)
    try:
        yield
    finally:
        stack.pop()
