"""Writes variables as a TF1 name-based checkpoint (tf.compat.v1.train.Saver), each under the name it is given.

Eager Saver refuses distributed variables, so each variable goes in through a SaveableObject that reads
its value (plain, Mirrored and TPU variables alike). One data shard: sharded=True fails in eager mode
(AttributeError: Tensor.op is undefined), and would only add a merge step, a second copy on gs://.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import tensorflow as tf
from tensorflow.python.training.saving import saveable_object


def write(variables: Mapping[str, tf.Variable], prefix: str) -> None:
    """Writes `prefix`.index and `prefix`.data-00000-of-00001; prefix ends in `-<step>`, as Saver names it."""
    base, _, step = prefix.rpartition("-")
    saveables = {name: _VariableSaveable(var, name) for name, var in variables.items()}
    quiet = _DropMessage("Saver is deprecated")  # logged at every eager construction; we use it on purpose
    tf.get_logger().addFilter(quiet)
    try:
        saver = tf.compat.v1.train.Saver(var_list=saveables, sharded=False, max_to_keep=None, save_relative_paths=True)
    finally:
        tf.get_logger().removeFilter(quiet)
    saver.save(None, base, global_step=int(step), write_state=False, write_meta_graph=False)


def tf_variable(var):
    """The tf.Variable behind a Keras 3 variable (which has no read_value); tf.Variables as they are."""
    return var if hasattr(var, "read_value") else var.value


class _VariableSaveable(saveable_object.SaveableObject):
    """Saves a variable under a chosen name by reading its value; restores by assigning."""

    def __init__(self, var, name: str):
        var = tf_variable(var)
        spec = saveable_object.SaveSpec(var.read_value, "", name, dtype=var.dtype, device="/cpu:0")
        super().__init__(var, [spec], name)
        self._var = var

    def restore(self, restored_tensors, restored_shapes):
        return self._var.assign(restored_tensors[0])


class _DropMessage(logging.Filter):
    def __init__(self, start: str):
        super().__init__()
        self._start = start

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self._start)
