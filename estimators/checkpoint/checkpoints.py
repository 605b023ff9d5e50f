"""Checkpoints in tf.estimator's format: `model.ckpt-<step>` files keyed by TF1 variable names.

Keys are exactly the names tf.estimator wrote (`global_step`, `dense/kernel`, `dense/kernel/Adam`),
so tf.estimator model_dirs resume here and `tf.train.load_variable(model_dir, "dense/kernel")`
reads ours. tf.train.Checkpoint cannot write these (a TF1 slot `dense/kernel/Adam` nests under
the variable `dense/kernel`), and the eager tf.compat.v1.train.Saver refuses distributed variables,
so the Saver writes SaveableObjects that read and assign through whatever variable they wrap
(plain, mirrored or TPU).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import tensorflow as tf
from tensorflow.python.training.saving import saveable_object

GLOBAL_STEP = "global_step"
BASENAME = "model.ckpt"
_MAX_LISTED = 10


class CheckpointMismatchError(ValueError):
    """A checkpoint lacks variables the model needs, or holds them with other shapes or dtypes."""


class _VariableSaveable(saveable_object.SaveableObject):
    """Saves `var.read_value()` under a TF1 name and restores with `var.assign`, for any variable type."""

    def __init__(self, variable: Any, name: str):
        spec = saveable_object.SaveSpec(variable.read_value, "", name, dtype=variable.dtype.base_dtype,
                                        device="/cpu:0")
        super().__init__(variable, [spec], name)
        self._variable = variable

    def restore(self, restored_tensors, restored_shapes):
        return self._variable.assign(restored_tensors[0])


def save(variables: Mapping[str, Any], model_dir: str, step: int, max_to_keep: int) -> str:
    """Writes `variables` as model_dir/model.ckpt-<step>, records it as latest, keeps the newest max_to_keep."""
    tf.io.gfile.makedirs(model_dir)
    saver = tf.compat.v1.train.Saver(
        var_list={name: _VariableSaveable(var, name) for name, var in variables.items()},
        max_to_keep=max_to_keep or None, save_relative_paths=True)
    state = tf.train.get_checkpoint_state(model_dir)
    if state is not None:
        saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
    return saver.save(None, os.path.join(model_dir, BASENAME), global_step=step, write_meta_graph=False)


def latest(model_dir: str) -> str | None:
    """The newest checkpoint in model_dir, None when there is none; never None for one it cannot read.

    tf.train.latest_checkpoint answers None when the state file cannot be read (a transient GCS
    error, a deleted checkpoint); training would then silently start over and overwrite the run.
    """
    state_file = os.path.join(model_dir, "checkpoint")
    if not tf.io.gfile.exists(state_file):
        return None
    path = tf.train.latest_checkpoint(model_dir)
    if path is None:
        raise RuntimeError(
            f"{state_file} exists but names no readable checkpoint (a storage error, or its files were "
            "deleted). Refusing to start over in this model_dir: retry, or restore/remove that file."
        )
    return path


def resolve_path(path: str) -> str:
    """A checkpoint prefix from a prefix or a directory; ValueError when there is none."""
    if tf.io.gfile.isdir(path):
        found = tf.train.latest_checkpoint(path)
        if found is None:
            raise ValueError(f"No checkpoint found in directory {path!r}.")
        return found
    if not tf.io.gfile.exists(path + ".index"):
        raise ValueError(f"No checkpoint at {path!r} (expected {path}.index).")
    return path


def contents(path: str) -> dict[str, tuple[tuple, tf.DType]]:
    """{name: (shape, dtype)} of every variable stored in a checkpoint."""
    reader = tf.train.load_checkpoint(path)
    dtypes = reader.get_variable_to_dtype_map()
    return {name: (tuple(shape), dtypes[name]) for name, shape in reader.get_variable_to_shape_map().items()}


def _listing(names: list[str]) -> str:
    shown = ", ".join(sorted(names)[:_MAX_LISTED])
    return shown + (f", ... ({len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else "")


def restore(path: str, assignments: Mapping[str, Any], required: set[str] | None = None) -> set[str]:
    """Assigns checkpoint value `name` to each `assignments[name]`; returns the names restored.

    Every required name must be in the checkpoint with the variable's shape and dtype (others are
    restored when present). Everything is checked before anything is assigned.
    """
    stored = contents(path)
    required = set(assignments) if required is None else set(required)
    missing = sorted(n for n in required if n not in stored)
    mismatched = []
    for name, variable in assignments.items():
        if name not in stored:
            continue
        shape, dtype = stored[name]
        want_shape, want_dtype = tuple(variable.shape.as_list()), variable.dtype.base_dtype
        if shape != want_shape or dtype != want_dtype:
            mismatched.append(f"{name} (checkpoint {list(shape)} {dtype.name}, model {list(want_shape)} "
                              f"{want_dtype.name})")
    if missing or mismatched:
        parts = []
        if missing:
            parts.append(f"{len(missing)} variable(s) missing: {_listing(missing)}")
        if mismatched:
            parts.append(f"{len(mismatched)} with another shape or dtype: {_listing(mismatched)}")
        raise CheckpointMismatchError(
            f"Checkpoint {path} does not match this model_fn's variables: {'; '.join(parts)}. Was it "
            "written by a different model? Use a fresh model_dir, the same model_fn, or warm_start_from."
        )
    reader = tf.train.load_checkpoint(path)
    restored = set()
    for name, variable in assignments.items():
        if name in stored:
            variable.assign(reader.get_tensor(name))
            restored.add(name)
    return restored


def variable_names(path: str) -> list[str]:
    """The variable names stored in a checkpoint, as tf.estimator's get_variable_names gave them."""
    return sorted(contents(path))


def variable_value(path: str, name: str):
    """A numpy copy of variable `name` in the checkpoint."""
    name = re.sub(r":0$", "", name)
    if name not in contents(path):
        raise ValueError(f"No variable {name!r} in checkpoint {path}; see get_variable_names().")
    return tf.train.load_variable(path, name)


def global_step_of(path: str) -> int:
    return int(tf.train.load_variable(path, GLOBAL_STEP))
