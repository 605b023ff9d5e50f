"""Which of tf.estimator's argument names a user function declares (model_fn, input_fn): they are passed by name;
model_fn bound to its arguments as a call without any."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def declared_args(fn: Callable, allowed: tuple[str, ...], what: str, hint: str = "") -> tuple[str, ...]:
    """The names among `allowed` that fn takes, in its order; ValueError for any other required argument."""
    names = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in allowed:
            names.append(name)
        elif param.default is param.empty:
            raise ValueError(
                f"{what} has a required argument {name!r} the engine cannot fill; {what} may take any of "
                f"{', '.join(allowed)} (by name).{hint}"
            )
    return tuple(names)


_ALLOWED_ARGS = ("features", "labels", "mode", "params", "config")


def model_fn_args(model_fn: Callable) -> tuple[str, ...]:
    """The tf.estimator argument names model_fn accepts; ValueError for any other required one."""
    names = declared_args(model_fn, _ALLOWED_ARGS, "model_fn")
    if "features" not in names:
        raise ValueError("model_fn must take a `features` argument.")
    return tuple(names)


def bound_model_fn(model_fn: Callable, args: tuple[str, ...], features: Any, labels: Any, mode: str, params: dict,
                   config: Any) -> Callable[[], Any]:
    """model_fn as a call without arguments, passing by name those of its `args`; ValueError when input_fn gave
    labels and model_fn takes none."""
    if labels is not None and "labels" not in args:
        raise ValueError("model_fn does not take labels, but input_fn returns labels: add a `labels` argument to "
                         "model_fn, or return features only from input_fn.")
    values = {"features": features, "labels": labels, "mode": mode, "params": params, "config": config}
    return lambda: model_fn(**{name: values[name] for name in args})
