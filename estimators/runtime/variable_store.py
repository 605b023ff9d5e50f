"""Create-once variables for model_fns that build layers, optimizers and metrics on every call.

tf.function traces a model_fn several times (first-call double trace, retraces, one call per
replica, one per mode).  A `tf.variable_creator_scope` hands each call the variables an earlier
call created at the same position, so every call shares one set of variables.  A call in a new
mode reuses the longest matching prefix of earlier calls (the model's own layers) and creates
the rest (optimizer slots in TRAIN, metric state in EVAL).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import tensorflow as tf

_COUNTER_SUFFIX = re.compile(r"_\d+(?=_|$)")


def stable_name(name: str) -> str:
    """Strips the `:0` and Keras' per-process `_<n>` counters so a name reads the same in every call."""
    name = name.split(":")[0].replace("/", "_")
    return _COUNTER_SUFFIX.sub("", name) or "variable"


@dataclass(frozen=True)
class _Signature:
    name: str
    shape: tuple | None
    dtype: tf.DType | None

    def matches(self, other: _Signature) -> bool:
        """Same name, and the same shape and dtype wherever both sides know them."""
        return (
            self.name == other.name
            and (self.shape is None or other.shape is None or self.shape == other.shape)
            and (self.dtype is None or other.dtype is None or self.dtype == other.dtype)
        )


def _signature(kwargs: dict) -> _Signature:
    shape = kwargs.get("shape")
    if shape is None:
        initial = kwargs.get("initial_value")
        shape = getattr(initial, "shape", None)
    shape = tuple(tf.TensorShape(shape).as_list()) if shape is not None else None
    dtype = kwargs.get("dtype")
    return _Signature(stable_name(kwargs.get("name") or ""), shape, tf.as_dtype(dtype) if dtype else None)


@dataclass
class _Sequence:
    """The variables one kind of call (a mode) creates, in creation order."""

    variables: list = field(default_factory=list)
    signatures: list = field(default_factory=list)


class VariableStore:
    """Hands every call of a function the variables its first call created, by creation order."""

    def __init__(self) -> None:
        self._sequences: dict[str, _Sequence] = {}
        self._lock = threading.RLock()
        self._creating = threading.local()

    def sequence(self, key: str) -> list:
        """The variables calls under `key` use, in creation order (empty before the first call)."""
        return list(self._sequences.get(key, _Sequence()).variables)

    @contextlib.contextmanager
    def scope(self, key: str, share: bool = True) -> Iterator[list]:
        """Within the block, variable creation is served from the store for calls under `key`.

        Yields the list of variables this call used, in order (filled as the call runs).
        With share=False, a first call never reuses what calls under other keys created.
        """
        used: list = []
        position = [0]
        candidates = [s for k, s in self._sequences.items() if k != key] if share else []

        def creator(next_creator, **kwargs):
            if getattr(self._creating, "active", False):
                return next_creator(**kwargs)
            with self._lock:
                index = position[0]
                position[0] += 1
                sig = _signature(kwargs)
                seq = self._sequences.setdefault(key, _Sequence())
                if index < len(seq.variables):
                    var = seq.variables[index]
                    self._check_same(key, index, seq.signatures[index], sig)
                else:
                    var = self._reuse_from(candidates, index, sig)
                    if var is None:
                        var = self._create(kwargs)
                    seq.variables.append(var)
                    seq.signatures.append(_Signature(sig.name, tuple(var.shape.as_list()), var.dtype))
                used.append(var)
                return var

        with tf.variable_creator_scope(creator):
            yield used

    @staticmethod
    def _check_same(key: str, index: int, old: _Signature, new: _Signature) -> None:
        if not old.matches(new):
            raise ValueError(
                f"model_fn created variable #{index} ({new.name!r}, shape {new.shape}, {new.dtype}) "
                f"in mode {key!r}, but an earlier call created {old.name!r} (shape {old.shape}, "
                f"{old.dtype}) at that position. A model_fn must create the same variables in the "
                "same order on every call (do not branch variable creation on data or Python state)."
            )

    @staticmethod
    def _reuse_from(candidates: list, index: int, sig: _Signature):
        """The variable another mode created at this position, while that mode still matches."""
        for seq in list(candidates):
            if index < len(seq.signatures) and seq.signatures[index].matches(sig):
                continue
            candidates.remove(seq)
        return candidates[0].variables[index] if candidates else None

    def _create(self, kwargs: dict):
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
        # The variable exists (initialised) before the trace goes on, so tf.function need not
        # lift it: without this it would trace the whole loop a second time.
        kwargs["experimental_enable_variable_lifting"] = False
        self._creating.active = True
        try:
            with tf.init_scope():
                return tf.Variable(**kwargs)
        finally:
            self._creating.active = False


def _synchronised_state(kwargs: dict) -> dict:
    """Non-trainable float state updated per replica (BatchNorm moving statistics) gets MEAN aggregation.

    Keras leaves it unaggregated, so under N replicas each copy drifts on its own and evaluation
    would depend on the replica count; averaging keeps every copy equal.
    """
    dtype = kwargs.get("dtype")
    initial = kwargs.get("initial_value")
    dtype = tf.as_dtype(dtype) if dtype is not None else getattr(initial, "dtype", None)
    if (
        kwargs.get("trainable") is False
        and dtype is not None
        and tf.as_dtype(dtype).is_floating
        and kwargs.get("aggregation") in (None, tf.VariableAggregation.NONE)
        and kwargs.get("synchronization") != tf.VariableSynchronization.ON_READ
    ):
        return dict(kwargs, aggregation=tf.VariableAggregation.MEAN)
    return kwargs
