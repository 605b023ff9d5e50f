"""Checkpoints of model_fn-created variables under stable keys, via tf.train.CheckpointManager.

Key naming: `global_step`, and `model_fn/<NNNN>_<name>` where NNNN is the variable's position in
the order model_fn creates variables and <name> is its Keras name without per-process counters
(`model_fn/0000_kernel`, `model_fn/0012_adam_sequential_dense_kernel_momentum`). Positions are
the same in every mode and process as long as model_fn builds its layers in the same order, so
checkpoints restore across processes, modes and replica counts (a MirroredVariable saves one value).
"""

from __future__ import annotations

import os

import tensorflow as tf

from estimators.runtime.variable_store import VariableStore, stable_name

GLOBAL_STEP = "global_step"
_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
MODES_SAVED = ("train", "eval", "infer")


def checkpoint_key(index: int, variable) -> str:
    name = getattr(variable, "name", "variable")
    return f"{index:04d}_{stable_name(name.split('/')[-1])}"


def keyed_variables(store: VariableStore, exclude_ids: set[int]) -> dict:
    """{key: variable} for every model_fn variable that belongs in a checkpoint (metrics excluded)."""
    result: dict = {}
    owners: dict = {}
    for mode in MODES_SAVED:
        for index, var in enumerate(store.sequence(mode)):
            if id(var) in exclude_ids:
                continue
            key = checkpoint_key(index, var)
            if key in result and result[key] is not var:
                raise ValueError(
                    f"model_fn created different variables at position {index} in modes "
                    f"{owners[key]!r} and {mode!r} (both named {key!r}); create mode-specific "
                    "variables after the ones every mode shares."
                )
            result[key], owners[key] = var, mode
    return result


def make_checkpoint(variables: dict, global_step: tf.Variable) -> tf.train.Checkpoint:
    return tf.train.Checkpoint(global_step=global_step, model_fn=dict(variables))


def save(checkpoint: tf.train.Checkpoint, model_dir: str, step: int, max_to_keep: int) -> str:
    """Writes a checkpoint for `step` into model_dir, keeping the newest `max_to_keep` (0: all)."""
    manager = tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=max_to_keep or None)
    return manager.save(checkpoint_number=step)


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


def restore(checkpoint: tf.train.Checkpoint, path: str, complete: bool) -> None:
    """Restores `path` into the checkpoint's variables; complete=True demands every variable."""
    status = checkpoint.restore(path)
    if complete:
        try:
            status.assert_existing_objects_matched()
        except AssertionError as err:
            raise ValueError(
                f"Checkpoint {path} does not match this model_fn's variables: {err}. Was it written "
                "by a different model? Use a fresh model_dir or the same model_fn."
            ) from None
    status.expect_partial()  # state this model does not use (e.g. optimizer slots at export) is fine


def variable_names(path: str) -> list[str]:
    """The variable names stored in a checkpoint, in tf.estimator's `get_variable_names` style."""
    names = []
    for key, _ in tf.train.list_variables(path):
        if key.endswith(_VALUE_SUFFIX) and not key.startswith("save_counter"):
            names.append(key[: -len(_VALUE_SUFFIX)])
    return sorted(names)


def variable_value(path: str, name: str):
    """A numpy copy of variable `name` (as returned by `variable_names`) in the checkpoint."""
    if name not in variable_names(path):
        raise ValueError(f"No variable {name!r} in checkpoint {path}; see get_variable_names().")
    return tf.train.load_variable(path, name + _VALUE_SUFFIX)


def global_step_of(path: str) -> int:
    return int(tf.train.load_variable(path, GLOBAL_STEP + _VALUE_SUFFIX))
