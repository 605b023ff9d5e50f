"""`Layer.get_updates_for` for tf_keras and Keras 3 layers, as Keras 2 graph code called it in model_fn.

Under tf.estimator 2.15 model_fn ran in a TF1 graph, where a Keras model's BatchNormalization
only built its moving-average updates; model_fns fetched them with `model.get_updates_for(inputs)`
and grouped them into train_op (the Colab TPU notebooks did). TF2 layers apply those updates
while they are called (training=True), so there is nothing left to group: here the method returns
no ops and the statistics move exactly when the model is called in training, as they did in 2.15
whenever the ops were grouped. (A model_fn that built the updates but never ran them kept its
statistics fixed in 2.15; here they move.)

The method exists only while an engine call runs (compat/scoped_patches.py takes it away again) and
only inside a model_fn call: elsewhere, another thread's code during train() included, Keras layers
have no `get_updates_for`, as without this library (`hasattr(layer, "get_updates_for")` is False).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from estimators.compat import scoped_patches
from estimators.compat.call_context import call_in_graph

_NAME = "get_updates_for"


def _get_updates_for(self: Any, inputs: Any) -> list:
    """Keras 2's graph-mode update ops of this layer for `inputs`: none, they ran when it was called."""
    del self, inputs
    return []


class _InModelFnCalls:
    """A method that exists only inside model_fn calls: elsewhere looking it up raises AttributeError."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if call_in_graph() is None:
            raise AttributeError(f"{(owner or type(instance)).__name__!r} object has no attribute {_NAME!r}")
        return _get_updates_for if instance is None else _get_updates_for.__get__(instance, owner)


_METHOD = _InModelFnCalls()


def _add_to(cls: type | None) -> None:
    if cls is not None and not any(_NAME in vars(each) for each in cls.__mro__):
        scoped_patches.replace(cls, _NAME, _METHOD)


def install() -> None:
    """Adds the method to the Keras layer classes imported so far, for the engine call (scoped_patches.engine_call,
    which calls this under its lock; idempotent)."""
    if "keras" in sys.modules:
        import keras

        _add_to(keras.layers.Layer)
    module = sys.modules.get("tf_keras.src.engine.base_layer")
    if module is None and os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true"):
        # tf.keras is tf_keras, imported lazily: maybe for the first time inside this model_fn call.
        try:
            module = importlib.import_module("tf_keras.src.engine.base_layer")
        except ImportError:
            module = None
    if module is not None:
        _add_to(getattr(module, "Layer", None))
