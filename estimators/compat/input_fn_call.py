"""Calling input_fn as tf.estimator did: `mode`, `params`, `config`, `input_context` by name.

tf.estimator passes each of those only when input_fn declares an argument of that name, so
`input_fn(mode, params)` gets the mode as `mode` (never the params dict in its first position).
TPUEstimator required `params`, where it puts the batch size.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import tensorflow as tf

INPUT_FN_ARGS = ("mode", "params", "config", "input_context")


def input_fn_args(input_fn: Callable) -> tuple[str, ...]:
    """The names input_fn takes among INPUT_FN_ARGS; ValueError for any other required argument."""
    if not callable(input_fn):
        raise ValueError(f"input_fn must be callable, got {type(input_fn).__name__}.")
    try:
        parameters = inspect.signature(input_fn).parameters
    except (TypeError, ValueError):
        return ()
    names = []
    for name, param in parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in INPUT_FN_ARGS:
            names.append(name)
        elif param.default is param.empty:
            raise ValueError(
                f"input_fn has a required argument {name!r} the engine cannot fill; an input_fn takes any of "
                f"{', '.join(INPUT_FN_ARGS)} (by name). Bind others with functools.partial or a lambda."
            )
    return tuple(names)


def call_input_fn(input_fn: Callable, *, mode: str, params: dict, config: Any, input_context: Any = None,
                  require_params: bool = False) -> tf.data.Dataset:
    """input_fn's dataset, called with the arguments it declares; ValueError unless it returns a Dataset."""
    args = input_fn_args(input_fn)
    if require_params and "params" not in args:
        raise ValueError(
            f"input_fn {getattr(input_fn, '__name__', input_fn)!r} does not take a `params` argument, which "
            "TPUEstimator needs to pass the batch size as params['batch_size']."
        )
    values = {"mode": mode, "params": params, "config": config, "input_context": input_context}
    dataset = input_fn(**{name: values[name] for name in args})
    if not isinstance(dataset, tf.data.Dataset):
        raise ValueError(
            f"input_fn must return a tf.data.Dataset, got {type(dataset).__name__}. (A (features, labels) "
            "tuple of tensors works too: wrap it with tf.data.Dataset.from_tensors(...).)"
        )
    return dataset
