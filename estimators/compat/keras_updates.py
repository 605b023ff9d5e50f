"""`Layer.get_updates_for` for tf_keras and Keras 3 layers, as Keras 2 graph code called it in model_fn.

Under tf.estimator 2.15 model_fn ran in a TF1 graph, where a Keras model's BatchNormalization
only built its moving-average updates; model_fns fetched them with `model.get_updates_for(inputs)`
and grouped them into train_op (the Colab TPU notebooks did). TF2 layers apply those updates
while they are called (training=True), so there is nothing left to group: here the method returns
no ops and the statistics move exactly when the model is called in training, as they did in 2.15
whenever the ops were grouped. (A model_fn that built the updates but never ran them kept its
statistics fixed in 2.15; here they move.)
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from typing import Any

_lock = threading.Lock()
_installed: set[str] = set()


def _get_updates_for(self: Any, inputs: Any) -> list:
    """Keras 2's graph-mode update ops of this layer for `inputs`: none, they ran when it was called."""
    del self, inputs
    return []


def _add_to(cls: type | None) -> None:
    if cls is not None and not hasattr(cls, "get_updates_for"):
        cls.get_updates_for = _get_updates_for


def install() -> None:
    """Adds the method to the Keras layer classes imported so far (idempotent; cheap before every call)."""
    with _lock:
        if "keras" not in _installed and "keras" in sys.modules:
            import keras

            _add_to(keras.layers.Layer)
            _installed.add("keras")
        if "tf_keras" in _installed:
            return
        module = sys.modules.get("tf_keras.src.engine.base_layer")
        if module is None and os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true"):
            # tf.keras is tf_keras, imported lazily: maybe for the first time inside this model_fn call.
            try:
                module = importlib.import_module("tf_keras.src.engine.base_layer")
            except ImportError:
                module = None
        if module is not None:
            _add_to(getattr(module, "Layer", None))
            _installed.add("tf_keras")
