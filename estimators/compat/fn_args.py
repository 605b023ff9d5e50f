"""Which of tf.estimator's argument names a user function declares (model_fn, input_fn): they are passed by name."""

from __future__ import annotations

import inspect
from collections.abc import Callable


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
