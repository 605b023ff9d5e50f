"""Create-once variables for model_fns that build layers, optimizers and metrics on every call.

tf.function traces a model_fn several times (retraces, one call per replica, one per mode). Within
the store's creator scope, every variable is keyed by its TF1 name (tf2/naming.py): the first
request creates it, later requests for the same name get the same variable. So train, eval and
predict share the model's weights, a checkpoint key depends only on what model_fn builds, and the
keys are the names tf.estimator wrote. Each variable also has a kind: model weights, optimizer
state, or local state (metrics, a Keras optimizer's learning rate) that is never checkpointed.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from tensorflow.python.eager import context

from estimators.compat import write_guard
from estimators.compat.call_context import creating_optimizer_state, current_call
from estimators.tf2 import naming

MODEL = "model"
OPTIMIZER = "optimizer"
LOCAL = "local"
STEP = "step"
GLOBAL_STEP = "global_step"

_KEYS = tf.compat.v1.GraphKeys
_LOCAL_COLLECTIONS = {_KEYS.LOCAL_VARIABLES, _KEYS.METRIC_VARIABLES}


@dataclass
class StoredVariable:
    """One variable the store created: its TF1 name, kind, and the modes that used it."""

    name: str
    variable: Any
    kind: str
    trainable: bool
    modes: set = field(default_factory=set)
    initial: Any = None  # a TF1 local variable's initial value (numpy): evaluate() resets metrics to it

    @property
    def shape(self) -> tuple:
        return tuple(self.variable.shape.as_list())

    @property
    def tf1_trainable(self) -> bool:
        """In TF1's TRAINABLE_VARIABLES: a model's trainable variable. An optimizer's never was, whatever its flag
        (Keras 3's Nadam keeps u_product in a trainable variable)."""
        return self.trainable and self.kind == MODEL


def _requested_shape(kwargs: dict) -> tuple | None:
    shape = kwargs.get("shape")
    if shape is None:
        shape = getattr(kwargs.get("initial_value"), "shape", None)
    if shape is None and callable(kwargs.get("initial_value")):
        shape = naming.keras_variable_shape()  # Keras 3 passes `lambda: initializer(shape)` and no shape
    return tuple(tf.TensorShape(shape).as_list()) if shape is not None else None


def _requested_dtype(kwargs: dict) -> tf.DType | None:
    dtype = kwargs.get("dtype") or getattr(kwargs.get("initial_value"), "dtype", None)
    return tf.as_dtype(dtype).base_dtype if dtype is not None else None


def variable_kind(kwargs: dict) -> str:
    """MODEL, OPTIMIZER or LOCAL for a variable being created (see the module docstring)."""
    state = creating_optimizer_state()
    owner = state.optimizer if state is not None else naming.keras_owner() or naming.tf_keras_optimizer_owner()
    if isinstance(owner, keras.metrics.Metric):
        return LOCAL
    if owner is not None:  # Keras 3 keeps the learning rate in a variable; TF1 kept it in the graph
        is_keras = isinstance(owner, keras.optimizers.Optimizer) or naming.is_tf_keras_new_optimizer(owner)
        return LOCAL if is_keras and naming.clean(kwargs.get("name")) == "learning_rate" else OPTIMIZER
    if _LOCAL_COLLECTIONS & set(kwargs.get("collections") or ()):
        return LOCAL
    if naming.tf_keras_metric_owner() is not None:
        return LOCAL
    # Summed per-replica state is a metric's; ON_READ with MEAN is tf_keras BatchNorm's moving statistics.
    on_read = kwargs.get("synchronization") == tf.VariableSynchronization.ON_READ
    if on_read and kwargs.get("trainable") is False and kwargs.get("aggregation") == tf.VariableAggregation.SUM:
        return LOCAL
    return MODEL


class VariableStore:
    """Hands every model_fn call the variables earlier calls created under the same TF1 names."""

    def __init__(self, global_step: tf.Variable) -> None:
        self._by_name: dict[str, StoredVariable] = {
            GLOBAL_STEP: StoredVariable(GLOBAL_STEP, global_step, STEP, trainable=False),
        }
        self._names_by_id: dict[int, str] = {id(global_step): GLOBAL_STEP}
        self._component_ids: set[int] = {id(each) for each in getattr(global_step, "values", None) or ()}
        self._lock = threading.RLock()
        self._creating = threading.local()

    # -- reading ------------------------------------------------------------------------------------
    def variables(self, kinds: tuple[str, ...] = (MODEL, OPTIMIZER, STEP)) -> dict[str, Any]:
        """{TF1 name: variable} for the given kinds, in creation order."""
        return {n: s.variable for n, s in self._by_name.items() if s.kind in kinds}

    def entries(self) -> list[StoredVariable]:
        return list(self._by_name.values())

    def tf1_local_variables(self) -> list[StoredVariable]:
        """The variables created in TF1's LOCAL_VARIABLES / METRIC_VARIABLES (tf.compat.v1.metrics state)."""
        return [s for s in self._by_name.values() if s.initial is not None]

    def name_of(self, variable: Any) -> str | None:
        """The TF1 name of a store variable (or of the Keras variable wrapping one)."""
        variable = getattr(variable, "value", variable) if isinstance(variable, keras.Variable) else variable
        return self._names_by_id.get(id(variable))

    def holds(self, variable: Any) -> bool:
        """Whether a variable (a Keras variable's tf.Variable, or one replica's copy) is one the store created."""
        return self.name_of(variable) is not None or id(variable) in self._component_ids

    # -- creating -------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def creator_scope(self, mode: str) -> Iterator[None]:
        """Variable creation in the block is served by the store, for model_fn calls in `mode`.

        Enter it around strategy.run: optimizers may create their state in a cross-replica
        merge_call, which runs outside the replica threads (named by `mode`'s own namer).
        """
        merge_names = naming.CallNames()
        with tf.variable_creator_scope(functools.partial(self._creator, mode, merge_names)):
            yield

    def _creator(self, mode: str, merge_names: naming.CallNames, next_creator, **kwargs):
        if getattr(self._creating, "active", False):
            return next_creator(**kwargs)  # a distributed variable creating its components
        call = current_call()
        names = call.names if call is not None and call.names is not None else merge_names
        name = names.unique(self._name(kwargs, names))
        with self._lock:
            stored = self._by_name.get(name)
            if stored is None:
                stored = self._store(next_creator, name, kwargs)
            elif stored.kind == STEP:
                self._check_global_step(kwargs)
            else:
                self._check_same(stored, kwargs, mode)
            stored.modes.add(mode)
        if call is not None:
            call.variables.append(stored.variable)
            requested = set(kwargs.get("collections") or ())
            if _KEYS.LOCAL_VARIABLES in requested and _KEYS.METRIC_VARIABLES not in requested:
                call.session_locals.append(name)  # a session re-initialises it: the graph path's to run
            if call.collections is not None:
                call.collections.add(self._collections_for(stored, kwargs), stored.variable)
        return stored.variable

    def _name(self, kwargs: dict, names: naming.CallNames) -> str:
        owner = naming.keras_owner()
        slot = naming.keras_slot(owner) if isinstance(owner, keras.optimizers.Optimizer) else None
        if slot is not None:
            reference = self.name_of(slot[0])
            if reference is not None:  # a Keras 3 slot: named as TF1's optimizer named it
                return f"{reference}/{naming.tf1_slot_name(owner, slot[1])}"
        return names.scoped(kwargs.get("name"))

    def _store(self, next_creator, name: str, kwargs: dict) -> StoredVariable:
        kind = variable_kind(kwargs)
        variable = self._create(next_creator, dict(kwargs, name=name))
        trainable = bool(getattr(variable, "trainable", False))
        stored = StoredVariable(name, variable, kind, trainable)
        # only TRAIN's model_fn calls may write a saved one; a Keras 3 layer's own writes (BatchNormalization called
        # with training=True in EVAL) stay on the TF2 path, as no session can run Keras 3 layers
        write_guard.guard(variable, saved=kind != LOCAL, keras=naming.keras_variable_path() is not None)
        if _LOCAL_COLLECTIONS & set(kwargs.get("collections") or ()):
            stored.initial = _initial_value(variable)
        self._by_name[name] = stored
        self._names_by_id[id(variable)] = name
        self._component_ids.update(id(each) for each in getattr(variable, "values", None) or ())
        return stored

    @staticmethod
    def _collections_for(stored: StoredVariable, kwargs: dict) -> list[str]:
        requested = list(kwargs.get("collections") or ())
        if stored.kind == LOCAL:
            return requested or [_KEYS.LOCAL_VARIABLES]
        keys = requested or [_KEYS.GLOBAL_VARIABLES]
        if stored.tf1_trainable:
            keys += [_KEYS.TRAINABLE_VARIABLES]
        return keys

    @staticmethod
    def _check_global_step(kwargs: dict) -> None:
        dtype = _requested_dtype(kwargs)
        if (dtype is not None and not dtype.is_integer) or _requested_shape(kwargs) not in (None, ()):
            raise ValueError(
                "model_fn created a variable named 'global_step' that is not an integer scalar; the "
                "engine owns the global step. Use tf.compat.v1.train.get_global_step() instead."
            )

    @staticmethod
    def _check_same(stored: StoredVariable, kwargs: dict, mode: str) -> None:
        shape, dtype = _requested_shape(kwargs), _requested_dtype(kwargs)
        same_shape = shape is None or None in shape or shape == stored.shape
        same_dtype = dtype is None or dtype == stored.variable.dtype.base_dtype
        if not (same_shape and same_dtype):
            raise ValueError(
                f"model_fn created variable {stored.name!r} with shape {shape} and dtype "
                f"{dtype.name if dtype else None} in mode {mode!r}, but a call in mode(s) "
                f"{sorted(stored.modes)} created it with shape {stored.shape} and dtype "
                f"{stored.variable.dtype.base_dtype.name}. Layers are named by creation order, as in "
                "tf.estimator: a layer created in one mode only shifts the names of the layers after it. "
                "Create mode-specific layers after the shared ones, or give layers explicit names "
                "(keras.layers.Dense(..., name='head'))."
            )

    def _create(self, next_creator, kwargs: dict):
        """Creates the variable once, eagerly (outside any graph), with a constant initial value."""
        initial = kwargs.get("initial_value")
        if initial is not None and not callable(initial) and isinstance(initial, tf.Tensor):
            value = tf.get_static_value(initial)
            if value is None:
                raise ValueError(
                    f"Variable {kwargs.get('name')!r} created inside model_fn has an initial value "
                    "computed from data; give it a constant or an initializer instead."
                )
            kwargs = dict(kwargs, initial_value=value)
        kwargs = _synchronised_state(kwargs)
        for v1_only in ("collections", "use_resource", "expected_shape"):
            kwargs.pop(v1_only, None)  # eager variables join no graph collections; calls add them
        # The variable exists (initialised) before the trace goes on, so tf.function need not
        # lift it: without this it would trace the whole loop a second time.
        kwargs["experimental_enable_variable_lifting"] = False
        fresh_random = callable(kwargs.get("initial_value")) and naming.keras_variable_path() is None
        self._creating.active = True
        try:
            with tf.init_scope(), tf.name_scope(""):
                if fresh_random:
                    # TF1 initialisers ran as graph ops, each seeded random op with its own stream: one
                    # seeded initializer shared by several get_variable / tf.compat.v1.layers calls gave
                    # each variable the stream's start. Eagerly, ops with equal seeds share a cached
                    # kernel and its stream; clearing the kernel cache gives every variable a fresh one.
                    context.context().clear_kernel_cache()
                return next_creator(**kwargs)
        finally:
            self._creating.active = False


def _initial_value(variable: Any) -> np.ndarray:
    """A new variable's value as created (its first replica's copy), read eagerly."""
    first = (getattr(variable, "values", None) or [variable])[0]
    with tf.init_scope():
        return np.asarray(first.read_value())


def _synchronised_state(kwargs: dict) -> dict:
    """Non-trainable float state updated per replica (BatchNorm moving statistics) gets MEAN aggregation.

    Keras leaves it unaggregated, so under N replicas each copy drifts on its own and evaluation
    would depend on the replica count; averaging keeps every copy equal.
    """
    dtype = _requested_dtype(kwargs)
    if (
        kwargs.get("trainable") is False
        and dtype is not None
        and dtype.is_floating
        and kwargs.get("aggregation") in (None, tf.VariableAggregation.NONE)
        and kwargs.get("synchronization") != tf.VariableSynchronization.ON_READ
    ):
        return dict(kwargs, aggregation=tf.VariableAggregation.MEAN)
    return kwargs
