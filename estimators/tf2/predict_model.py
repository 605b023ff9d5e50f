"""The export package's only contact with the engine: model_fn in PREDICT mode and its checkpoint.

Everything else in estimators/export works on the spec model_fn returns and on tf.Variables;
re-point these few lines when the engine's internals change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from tensorflow.python.trackable import autotrackable

from estimators.checkpoint import checkpointer, mapping
from estimators.checkpoint.checkpointer import Checkpointer
from estimators.mode_keys import ModeKeys
from estimators.tf2.state import Runtime


class PredictModel:
    """model_fn called in PREDICT mode under the engine's variable store, and restored from a checkpoint."""

    def __init__(self, model_fn: Callable, params: dict, config: Any):
        self._runtime = Runtime(tf.distribute.get_strategy(), model_fn, params, config, static_shapes=False)
        self._object_keys = getattr(model_fn, "object_keys", None)  # a Keras estimator's object-based layout

    def __call__(self, features: Any) -> Any:
        """model_fn's checked spec for `features` (call inside the graph being exported)."""
        spec, _ = self._runtime.steps.call(ModeKeys.PREDICT, features, None, batch_size=None)
        return spec

    def restore(self, checkpoint_path: str) -> None:
        """Fills every model variable model_fn created from `checkpoint_path` (all must be there)."""
        variables = self._runtime.model_variables()
        plan = mapping.restore_plan(variables, checkpointer.restorable(checkpoint_path))
        Checkpointer(os.path.dirname(checkpoint_path) or ".", None).restore(checkpoint_path, plan)

    def trackables(self) -> dict:
        """What the SavedModel must hold for its functions: model_fn's variables and the global step.

        For an object-based Keras estimator they sit where its checkpoints keep them (`layer_with_weights-0/
        kernel`, `estimator_global_step`), as 2.15 exported them; the rest in `model_variables`.
        """
        variables = self._runtime.model_variables()
        if self._object_keys is None or not self._object_keys.recorded:
            return {"model_variables": list(variables.values()), "global_step": self._runtime.global_step}
        placed = self._object_keys.paths(variables)
        root = autotrackable.AutoTrackable()
        for name, path in placed.items():
            parent = root
            *parents, local = path.split("/")
            for part in parents:
                if not hasattr(parent, part):
                    setattr(parent, part, autotrackable.AutoTrackable())
                parent = getattr(parent, part)
            setattr(parent, local, variables[name])
        trackables = {part: getattr(root, part) for part in dict.fromkeys(p.split("/")[0] for p in placed.values())}
        rest = [variable for name, variable in variables.items() if name not in placed]
        return {**trackables, "model_variables": rest}
