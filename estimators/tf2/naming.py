"""TF1 names for the variables a model_fn call creates, the names tf.estimator 2.15 wrote.

A variable's name is its scope path when created, relative to the model_fn call: a Keras layer's
weights `dense/kernel` (or `sequential/dense/kernel` inside a called Sequential), get_variable's
variable-scope names (`model/w`), TF1 optimizer slots `dense/kernel/Adam`. Every call starts with
fresh Keras layer-name counters, a fresh Keras scope stack, fresh TF1 variable scopes and a fresh
graph name scope, so the names are the same in every replica, retrace, mode and process; repeats
inside one call get `_1`, `_2`, ... as TF1 graphs did.
"""

from __future__ import annotations

import collections
import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any

import keras
import tensorflow as tf

try:  # Keras 3 keeps layer-name counters and its scope stack in thread-local global state.
    from keras.src.backend.common import global_state as _keras_state
except ImportError:  # pragma: no cover - a Keras 3 release that moved it
    _keras_state = None

_KERAS_COUNTERS = "object_name_uids"
_KERAS_SCOPES = "name_scope_stack"
_ROOT_SCOPE = "model_fn"


_LAYER_CALL = getattr(keras.layers.Layer.__call__, "__wrapped__", keras.layers.Layer.__call__).__code__


def _keras_scope_callers() -> list:
    stack = (_keras_state.get_global_attribute(_KERAS_SCOPES) or []) if _keras_state is not None else []
    return [getattr(entry, "caller", None) for entry in stack]


def keras_variable_path() -> str | None:
    """The path of the Keras variable whose tf.Variable is being created, as Keras 2 would name it.

    Keras 3 may create the tf.Variable later than the Keras variable (symbolic builds), so the
    path is read from the Keras variable on the call stack. A model's own name stays in its
    weights' names only when it builds them while being called (a Sequential without an Input
    called in model_fn: `sequential/dense/kernel`); a model that builds when constructed (a
    Sequential with an Input) leaves its layers' names alone (`dense/kernel`), as Keras 2 did.
    None when no Keras variable is being initialised.
    """
    variable, calling, building = None, set(), []
    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if variable is None and isinstance(owner, keras.Variable):
            variable = owner
        elif isinstance(owner, keras.Model):
            if frame.f_code is _LAYER_CALL:
                calling.add(id(owner))
            elif frame.f_code.co_name == "build":
                building.append(owner)
        frame = frame.f_back
    if variable is None:
        return None
    constructed = {model.name for model in building if id(model) not in calling}
    return "/".join(part for part in variable.path.split("/") if part not in constructed)


def _loaded_classes(*names: tuple[str, str]) -> tuple[type, ...]:
    """The classes (module, class name) whose modules are imported already (tf_keras's: only if a program uses it)."""
    found = (getattr(sys.modules.get(module), name, None) for module, name in names)
    return tuple(cls for cls in found if cls is not None)


def _innermost_self(classes: tuple[type, ...], methods: frozenset[str] | None = None) -> Any:
    """The `self` of the innermost frame on this thread's stack that is an instance of `classes` (in one of
    `methods`, when given), else None: what Keras 3 / tf_keras create a variable for, where no scope says it."""
    frame = sys._getframe(1)
    while frame is not None:
        if methods is None or frame.f_code.co_name in methods:
            owner = frame.f_locals.get("self")
            if isinstance(owner, classes):
                return owner
        frame = frame.f_back
    return None


def keras_variable_shape() -> tuple | None:
    """The shape of the Keras variable whose tf.Variable is being created (Keras 3 gives only a callable); None."""
    variable = _innermost_self((keras.Variable,))
    return tuple(variable.shape) if variable is not None else None


def keras_owner() -> Any:
    """The innermost Keras metric or optimizer whose scope variable creation is in, else None."""
    for caller in reversed(_keras_scope_callers()):
        if isinstance(caller, (keras.metrics.Metric, keras.optimizers.Optimizer)):
            return caller
    return None


def tf_keras_metric_owner() -> Any:
    """The tf_keras (Keras 2) metric creating a variable now, found on the call stack, else None.

    tf_keras keeps no scope stack to ask; its metric weights are ON_READ like BatchNorm's moving
    statistics, so the owner, not the synchronisation, tells metric state from model state.
    """
    classes = _loaded_classes(("tf_keras.src.metrics.base_metric", "Metric"))
    return _innermost_self(classes) if classes else None


# Keras 3's BaseOptimizer method that makes a slot for a model variable: its frame holds the variable and slot name.
_KERAS_SLOT_CODE = next(c for c in keras.optimizers.Optimizer.__mro__
                        if c.__name__ == "BaseOptimizer").add_variable_from_reference.__code__
# The methods in which tf_keras's optimizers make their own variables (hyperparameters, `iter`, slots, rates).
_TF_KERAS_STATE_METHODS = frozenset({"__init__", "add_weight", "add_slot", "_build_learning_rate", "add_variable",
                                     "add_variable_from_reference"})


def keras_slot(optimizer: Any) -> tuple[Any, str] | None:
    """(model variable, slot name) when `optimizer` (Keras 3) is making that variable's slot now, else None.

    Read from its add_variable_from_reference call on this thread's stack: the name there has become
    `<the variable's path, '/' as '_'>_<slot>`, so the slot is what follows the variable's own prefix.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _KERAS_SLOT_CODE and frame.f_locals.get("self") is optimizer:
            reference, name = frame.f_locals.get("reference_variable"), str(frame.f_locals.get("name") or "var")
            path = getattr(reference, "path", None)
            prefix = path.replace("/", "_") if path is not None else \
                str(getattr(reference, "name", "")).replace("/", "_").replace(":", "_")
            return reference, name[len(prefix) + 1:] if name.startswith(prefix + "_") else name
        frame = frame.f_back
    return None


def tf_keras_optimizer_owner() -> Any:
    """The tf_keras (Keras 2) optimizer making one of its own variables now, found on the call stack, else None.

    tf_keras keeps no scope stack to ask; its optimizers make their state in a few methods of their own
    (hyperparameters, `iter`, slots, the newer optimizer's rate), so a frame of one of them tells its state.
    """
    classes = _loaded_classes(("tf_keras.src.optimizers.legacy.optimizer_v2", "OptimizerV2"),
                              ("tf_keras.src.optimizers.optimizer", "_BaseOptimizer"))
    return _innermost_self(classes, _TF_KERAS_STATE_METHODS) if classes else None


def is_tf_keras_new_optimizer(owner: Any) -> bool:
    """tf_keras's newer optimizer (tf.keras.optimizers.Adam with TF_USE_LEGACY_KERAS=1): a rate variable as Keras 3."""
    classes = _loaded_classes(("tf_keras.src.optimizers.optimizer", "_BaseOptimizer"))
    return bool(classes) and isinstance(owner, classes)


def clean(name: str | None) -> str:
    """A requested variable name without `:0` and trailing slashes (TF1 slot names end in `/`)."""
    name = (name or "Variable").split(":")[0].rstrip("/")
    return name or "Variable"


class CallNames:
    """Names the variables of one model_fn call (or of one step's cross-replica merge)."""

    def __init__(self, root: str = ""):
        self._root = root
        self._counts: collections.Counter = collections.Counter()
        self._layer_scopes: dict[int, str] = {}  # id(Keras layer) -> its scope in this call
        self._scope_layers: dict[str, Any] = {}  # ... and back (the layer object, kept alive for its id)

    @property
    def root(self) -> str:
        """The call's graph name scope ('' for the first call in a graph, else e.g. 'model_fn_1/')."""
        return self._root

    def scoped(self, requested: str | None) -> str:
        """The requested name under the current Keras path or graph name scope (relative to the call)."""
        path = keras_variable_path()
        if path is not None:
            return self._keras_name(path)
        if requested and requested.endswith("/") and requested.startswith(self._root):
            return clean(requested[len(self._root):])  # a full name scope, as tf.compat.v1.metrics passes
        name = clean(requested)
        # Eager-aware: tf_keras builds weights under init_scope, in the eager name scope init_scope
        # carried over (a functional model's layers, built on KerasTensors, in their own: `hidden/`).
        scope = tf.get_current_name_scope()
        if self._root and (scope + "/").startswith(self._root):
            scope = scope[len(self._root):]
        elif self._root and not tf.executing_eagerly():
            scope = ""  # TF1 variable scopes reset the name scope: `name` is already absolute
        return f"{scope}/{name}" if scope else name

    def _keras_name(self, path: str) -> str:
        """A Keras 3 variable's path as Keras 2 named it in tf.estimator's graph.

        Keras 2 named a layer's weights by the graph name scope it built them in, so 2.15 wrote
        `tower/dense/kernel` for a Dense called under tf.name_scope("tower"), and `proj_1/kernel` for the
        second of two layers named "proj". Keras 3's path holds neither: the graph name scopes outside the
        Keras layer scopes are put in front, and a layer whose scope another layer of this call already
        holds gets the next `_N`.
        """
        stack = (_keras_state.get_global_attribute(_KERAS_SCOPES) or []) if _keras_state is not None else []
        layer_path, _, variable = path.rpartition("/")
        outer = "" if tf.executing_eagerly() else self._outer_scope([entry.name for entry in stack])
        owner = getattr(stack[-1], "caller", None) if stack else None
        if not layer_path or not isinstance(owner, keras.layers.Layer):
            return f"{outer}/{path}" if outer else path
        scope = self._layer_scopes.get(id(owner))
        if scope is None:
            wanted = f"{outer}/{layer_path}" if outer else layer_path
            scope, count = wanted, 0
            while scope in self._scope_layers:
                count += 1
                scope = f"{wanted}_{count}"
            self._layer_scopes[id(owner)], self._scope_layers[scope] = scope, owner
        return f"{scope}/{variable}"

    def _outer_scope(self, keras_scopes: list[str]) -> str:
        """The graph name scope (relative to the call) around the Keras layer scopes now entered; '' if unclear."""
        scope = tf.get_current_name_scope()
        if self._root:
            if not (scope + "/").startswith(self._root):
                return ""
            scope = scope[len(self._root):]
        parts = [part for part in scope.split("/") if part]
        inner = len(keras_scopes)
        if not keras_scopes or len(parts) <= inner:
            return ""
        # Each Keras scope entered one graph name scope, which the graph may have made unique (`dense_1_1`).
        entered = zip(parts[-inner:], keras_scopes, strict=True)
        if not all(re.fullmatch(re.escape(name) + r"(_\d+)?", part) for part, name in entered):
            return ""
        return "/".join(parts[:-inner])

    def unique(self, name: str) -> str:
        """`name` the first time in this call, then `name_1`, `name_2`, ... (TF1 graph naming)."""
        count = self._counts[name]
        self._counts[name] += 1
        return name if count == 0 else f"{name}_{count}"


@contextlib.contextmanager
def _fresh_keras_names() -> Iterator[None]:
    if _keras_state is None:
        yield
        return
    saved = {key: _keras_state.get_global_attribute(key) for key in (_KERAS_COUNTERS, _KERAS_SCOPES)}
    _keras_state.set_global_attribute(_KERAS_COUNTERS, collections.defaultdict(int))
    _keras_state.set_global_attribute(_KERAS_SCOPES, [])
    try:
        yield
    finally:
        for key, value in saved.items():
            _keras_state.set_global_attribute(key, value)


@contextlib.contextmanager
def _fresh_tf_keras_names(graph: tf.Graph) -> Iterator[None]:
    """tf_keras (TF_USE_LEGACY_KERAS=1) counts layer names per graph; each call starts from zero."""
    backend = sys.modules.get("tf_keras.src.backend")
    uid_maps = getattr(backend, "PER_GRAPH_OBJECT_NAME_UIDS", None)
    if uid_maps is None:
        yield
        return
    saved = uid_maps.get(graph)
    uid_maps[graph] = collections.defaultdict(int)
    try:
        yield
    finally:
        if saved is None:
            uid_maps.pop(graph, None)
        else:
            uid_maps[graph] = saved


@contextlib.contextmanager
def call_names() -> Iterator[CallNames]:
    """Within the block, names start afresh as in a new TF1 graph; yields the call's namer.

    The first model_fn call in a graph (replica 0's, the one whose summaries are recorded) runs at the
    graph's root name scope, as tf.estimator ran model_fn, so summary tags and op names carry no
    prefix; later calls in the same graph (other replicas) get a fresh unique scope, so the graph's
    name uniquification gives them the same relative names.
    """
    graph = tf.compat.v1.get_default_graph()
    calls = getattr(graph, "_estimators_model_fn_calls", 0)
    graph._estimators_model_fn_calls = calls + 1  # noqa: SLF001 - our own marker on the graph
    with graph.name_scope(None), _fresh_keras_names(), _fresh_tf_keras_names(graph):
        if calls == 0:
            yield CallNames("")
            return
        with graph.name_scope(_ROOT_SCOPE) as root:
            yield CallNames(root)


def tf1_slot_name(optimizer: Any, slot: str | None) -> str:
    """The TF1 suffix of a Keras 3 optimizer's slot: `Adam`/`Adam_1` for Adam's m/v, `Momentum`, ...

    Slots are numbered in the order TF1's optimizer created them, so a tf.estimator checkpoint's
    slots map onto a Keras 3 optimizer of the same algorithm. Other optimizers: `<Class>/<slot>`.
    """
    opts = keras.optimizers
    known = [
        (opts.AdamW, "AdamW", ["momentum", "velocity", "velocity_hat"]),
        (opts.Adam, "Adam", ["momentum", "velocity", "velocity_hat"]),
        (opts.SGD, "Momentum", ["momentum"]),
        (opts.Adagrad, "Adagrad", ["accumulator"]),
        (opts.Ftrl, "Ftrl", ["accumulator", "linear"]),
        (opts.Adadelta, "Adadelta", ["accumulated_grad", "accumulated_delta_var"]),
    ]
    order = None
    if isinstance(optimizer, opts.RMSprop):
        base = "RMSProp"
        order = ["velocity"] + (["average_gradient"] if getattr(optimizer, "centered", False) else []) + ["momentum"]
    for cls, tf1_name, slots in known:
        if order is None and isinstance(optimizer, cls):
            base, order = tf1_name, slots
    slot = slot or "var"
    if order is None or slot not in order:
        return f"{type(optimizer).__name__}/{slot}"
    index = order.index(slot)
    return base if index == 0 else f"{base}_{index}"
