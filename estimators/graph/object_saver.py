"""The graph path's Saver for a Keras estimator's object-based checkpoints (2.15's checkpoint_format='checkpoint').

2.15's model_fn returned a Scaffold whose Saver wrote the Keras model's object-based keys and object graph;
this one does the same from the engine's layout (checkpoint/object_keys.py), and restores a checkpoint of
either format by the variables' TF1 names, through the Checkpointer's checked all-or-nothing restore, so
a model_dir written name-based (earlier versions, the TF2 path) or by 2.15 resumes on the graph path too.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.training.saving import saveable_object_util

from estimators.checkpoint import mapping, object_keys, writer
from estimators.checkpoint.checkpointer import Checkpointer


class ObjectKeySaver(tf.compat.v1.train.Saver):
    """Saves the graph's global variables under `keys`' object-based layout; restores either format."""

    def __init__(self, keys: object_keys.ObjectKeys):
        self._variables = {variable.op.name: variable for variable in tf.compat.v1.global_variables()}
        layout = keys.checkpoint(self._variables)
        var_list: list[Any] = []
        for key, value in layout.values.items():
            if isinstance(value, np.ndarray):  # an optimizer hyperparameter 2.15 kept in a variable: written only
                var_list.append(writer.constant_saveable(value, key))
            else:
                var_list.extend(saveable_object_util.saveable_objects_for_op(value, key))
        var_list.append(object_keys.graph_saveable(layout.graph))
        super().__init__(var_list=var_list, sharded=True, max_to_keep=None, save_relative_paths=True)

    def restore(self, sess: Any, save_path: str) -> None:
        """Restores the checkpoint at save_path, object-based or name-based, by TF1 name (all or nothing)."""
        checkpointer = Checkpointer(os.path.dirname(save_path) or ".", None, is_chief=False)
        plan = mapping.restore_plan(self._variables, checkpointer.restorable(save_path))
        checkpointer.restore(save_path, plan, assign=lambda variable, value: variable.load(value, sess))
