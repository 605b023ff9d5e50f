"""Writes variables as a TF1 name-based checkpoint (tf.compat.v1.train.Saver), each under the name it is given.

Eager Saver refuses distributed variables, so each variable goes in through a SaveableObject that reads
its value (plain, Mirrored and TPU variables alike). One data shard: sharded=True fails in eager mode
(AttributeError: Tensor.op is undefined), and would only add a merge step, a second copy on gs://.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.trackable import base as trackable_base
from tensorflow.python.training.saving import saveable_object


def write(variables: Mapping[str, Any], prefix: str, extra: Sequence[Any] = ()) -> None:
    """Writes `prefix`.index and `prefix`.data-00000-of-00001; prefix ends in `-<step>`, as Saver names it.

    A value may be a numpy array (written as a constant: an object-based checkpoint's optimizer
    hyperparameters); `extra`: further SaveableObjects (the object graph proto).
    """
    base, _, step = prefix.rpartition("-")
    _save(variables, base, int(step), extra, write_state=False)


def write_at(variables: Mapping[str, Any], path: str, extra: Sequence[Any] = ()) -> str:
    """write() to `path` itself (`keras_model.ckpt`, no step), named in its folder's `checkpoint` file as a
    tf.compat.v1 Saver names it; returns the path."""
    return _save(variables, path, None, extra, write_state=True)


def _save(variables: Mapping[str, Any], base: str, step: int | None, extra: Sequence[Any], write_state: bool) -> str:
    saveables = [constant_saveable(var, name) if isinstance(var, np.ndarray) else _VariableSaveable(var, name)
                 for name, var in variables.items()]
    saveables += list(extra)
    quiet = _DropMessage("Saver is deprecated")  # logged at every eager construction; we use it on purpose
    tf.get_logger().addFilter(quiet)
    try:
        saver = tf.compat.v1.train.Saver(var_list=saveables, sharded=False, max_to_keep=None, save_relative_paths=True)
    finally:
        tf.get_logger().removeFilter(quiet)
    return saver.save(None, base, global_step=step, write_state=write_state, write_meta_graph=False)


def tf_variable(var):
    """The tf.Variable behind a Keras 3 variable (which has no read_value); tf.Variables (and constants) as they
    are."""
    return var if hasattr(var, "read_value") or isinstance(var, np.ndarray) else var.value


class _VariableSaveable(saveable_object.SaveableObject):
    """Saves a variable under a chosen name by reading its value; restores by assigning."""

    def __init__(self, var, name: str):
        var = tf_variable(var)
        spec = saveable_object.SaveSpec(var.read_value, "", name, dtype=var.dtype, device="/cpu:0")
        super().__init__(var, [spec], name)
        self._var = var

    def restore(self, restored_tensors, restored_shapes):
        return self._var.assign(restored_tensors[0])


def constant_saveable(value: np.ndarray, name: str) -> saveable_object.SaveableObject:
    """Saves a constant under a chosen name and restores nothing (an optimizer hyperparameter 2.15 kept in a
    variable, which the model has not)."""
    with tf.device("/cpu:0"):
        tensor = tf.constant(value)
    return trackable_base.NoRestoreSaveable(tensor=tensor, name=name)


class _DropMessage(logging.Filter):
    def __init__(self, start: str):
        super().__init__()
        self._start = start

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self._start)
