"""A compiled model's own loss functions, required to return one loss per example.

Under N replicas Keras 3 divides a reduced loss by N (each replica's gradients are then summed), but
it leaves a loss function's value alone when the function already returned one number for the whole
batch (`tf.reduce_mean(...)` inside it): such a model would take N times larger steps on 8 TPU
cores than on one CPU, without a word. Keras's built-in losses return per-example values; losses
defined by the user (functions and keras.losses.Loss subclasses) are checked while model_fn is
traced, on every device count, so a model that runs here runs the same on a TPU.
"""

from __future__ import annotations

import functools
from typing import Any

import keras


def checked_losses(losses: Any) -> Any:
    """The compiled `loss` argument with every user-defined loss wrapped to refuse whole-batch values."""
    return keras.tree.map_structure(lambda leaf: _checked(leaf) if leaf is not None else None, losses)


def _is_builtin(value: Any) -> bool:
    module = getattr(value, "__module__", None) if callable(value) and not isinstance(value, keras.losses.Loss) \
        else type(value).__module__
    return (module or "").startswith("keras.")


def _checked(leaf: Any) -> Any:
    resolved = keras.losses.get(leaf) if isinstance(leaf, str) else leaf
    if resolved is None or _is_builtin(resolved):
        return leaf
    if isinstance(resolved, keras.losses.Loss):
        return _PerExampleLoss(resolved)
    if callable(resolved):
        @functools.wraps(resolved)
        def per_example(y_true, y_pred, **kwargs):
            return _per_example(resolved(y_true, y_pred, **kwargs), getattr(resolved, "__name__", repr(resolved)))

        return per_example
    return leaf


class _PerExampleLoss(keras.losses.Loss):
    """A user's Loss, reduced as it reduces itself, that refuses to return a whole-batch value."""

    def __init__(self, inner: keras.losses.Loss):
        super().__init__(name=inner.name, reduction=inner.reduction, dtype=inner.dtype)
        self._inner = inner

    def call(self, y_true, y_pred):
        return _per_example(self._inner.call(y_true, y_pred), self.name)


def _per_example(values: Any, name: str) -> Any:
    if getattr(getattr(values, "shape", None), "rank", None) == 0:
        raise ValueError(
            f"The compiled loss {name!r} returns one value for the whole batch, not one per example. Under "
            "N replicas Keras divides per-example losses by N but not such a value, so 1 and 8 replicas "
            "would train differently. Return the per-example losses (leave out the final mean: Keras "
            "averages them), or subclass keras.losses.Loss with a call() returning one value per example.")
    return values
