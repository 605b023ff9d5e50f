"""Calling a user's model_fn: the argument subset it takes and the record of what one call did."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_ALLOWED_ARGS = ("features", "labels", "mode", "params", "config")
_local = threading.local()


def model_fn_args(model_fn: Callable) -> tuple[str, ...]:
    """The tf.estimator argument names model_fn accepts; ValueError for any other required one."""
    signature = inspect.signature(model_fn)
    names = []
    for name, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in _ALLOWED_ARGS:
            names.append(name)
        elif param.default is param.empty:
            raise ValueError(
                f"model_fn has an argument {name!r} the engine cannot fill; a model_fn may take "
                f"any of {', '.join(_ALLOWED_ARGS)}."
            )
    if "features" not in names:
        raise ValueError("model_fn must take a `features` argument.")
    return tuple(names)


@dataclass
class ModelFnCall:
    """What one model_fn call created and applied, read by the engine and CrossShardOptimizer."""

    mode: str
    num_replicas: int
    variables: list = field(default_factory=list)
    optimizers: list = field(default_factory=list)

    @property
    def trainable_variables(self) -> list:
        return [v for v in self.variables if getattr(v, "trainable", False)]


def current_call() -> ModelFnCall | None:
    """The model_fn call running on this thread, or None outside model_fn."""
    return getattr(_local, "call", None)


def call_model_fn(model_fn: Callable, args: tuple[str, ...], record: ModelFnCall, features: Any,
                  labels: Any, params: dict, config: Any) -> Any:
    """Calls model_fn with the arguments it takes, with `record` as the current call."""
    if labels is not None and "labels" not in args:
        raise ValueError("input_fn returns labels but model_fn does not take a `labels` argument.")
    values = {"features": features, "labels": labels, "mode": record.mode, "params": params, "config": config}
    previous = current_call()
    _local.call = record
    try:
        return model_fn(**{name: values[name] for name in args})
    finally:
        _local.call = previous
