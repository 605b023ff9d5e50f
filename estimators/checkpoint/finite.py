"""Finite values only: a diverged model (NaN or Inf in its weights or optimizer slots) is never checkpointed.

Before a save is written, every floating-point variable is checked in one compiled reduction (one flag per
variable, one transfer to the host); a checkpoint about to hold NaN or Inf is refused with
NonFiniteCheckpointError, which names the newest checkpoint with finite values, the one a resume starts
from. Restoring a checkpoint that holds NaN or Inf (written before this check, or by another program)
logs a warning: evaluations, predictions and exports from it are meaningless.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from estimators import log as logging
from estimators.checkpoint.writer import tf_variable

_NAMED = 5  # variable names shown in a message


class NanLossError(FloatingPointError, tf.compat.v1.train.NanLossDuringTrainingError):
    """Training diverged (the loss or the variables became NaN or infinite); that state was not saved.

    Also a tf.compat.v1.train.NanLossDuringTrainingError, the error 2.15's NanTensorHook raised.
    """

    __str__ = BaseException.__str__  # NanLossDuringTrainingError's __str__ drops the message


class NonFiniteCheckpointError(NanLossError):
    """A checkpoint about to be saved would hold NaN or Inf: it was not written, the latest finite one stays."""


def nonfinite_variables(variables: Mapping[str, Any]) -> list[str]:
    """Names of the floating-point variables in {name: variable} holding NaN or Inf (one compiled reduction)."""
    floats = [(name, tf_variable(var)) for name, var in variables.items()]
    floats = [(name, var) for name, var in floats if _is_float(var.dtype)]
    if not floats:
        return []
    flags = _finite_flags([var for _, var in floats]).numpy()
    return [name for (name, _), ok in zip(floats, flags, strict=True) if not ok]


def finite_flags_op(variables: Sequence[tf.Variable]) -> tf.Tensor:
    """Graph path: one bool per variable, True when all its values are finite (built once, run at every save)."""
    with tf.name_scope("finite_check"):
        return _flags(variables)


def float_variables(variables: Iterable[tf.Variable]) -> list[tf.Variable]:
    """The floating-point variables among `variables` (the ones that can hold NaN or Inf)."""
    return [var for var in variables if _is_float(var.dtype)]


def nonfinite_values(values: Mapping[str, Any], dtypes: Mapping[str, tf.DType]) -> list[str]:
    """Names of the floating-point values in {name: numpy value} ({name: dtype} says which) holding NaN or Inf."""
    return [name for name, value in values.items() if _is_float(dtypes[name]) and _not_finite(value)]


def nonfinite_in_checkpoint(path: str) -> list[str]:
    """Names of the floating-point tensors stored in checkpoint `path` that hold NaN or Inf (reads them all)."""
    reader = tf.train.load_checkpoint(path)
    names = [name for name, dtype in reader.get_variable_to_dtype_map().items() if _is_float(dtype)]
    return [name for name in names if _not_finite(reader.get_tensor(name))]


def warn_if_nonfinite(path: str | None) -> None:
    """Logs a warning when checkpoint `path` holds NaN or Inf, reading it (the graph path's export, whose graph
    cannot take a check op). A checkpoint that cannot be read is left to the restore to report."""
    if not path:
        return
    try:
        bad = nonfinite_in_checkpoint(path)
    except (tf.errors.OpError, ValueError):
        return
    if bad:
        warn_restored(path, bad)


def warn_restored(path: str, bad: Sequence[str]) -> None:
    """The warning for restoring a checkpoint whose variables `bad` hold NaN or Inf."""
    logging.warning("Checkpoint %s holds NaN or Inf in %d variable(s) (%s): it was saved after training diverged. "
                    "Evaluations, predictions and exports from it are meaningless, and training from it diverges "
                    "again: use an earlier checkpoint (checkpoint_path=...).", path, len(bad), named(bad))


def named(names: Sequence[str]) -> str:
    """The first few names, sorted, and how many more."""
    ordered = sorted(names)
    shown = ", ".join(ordered[:_NAMED])
    return shown + (f", ... ({len(ordered) - _NAMED} more)" if len(ordered) > _NAMED else "")


def resume_note(latest: str | None, all_nonfinite: bool = False) -> str:
    """The sentence of the divergence errors naming the checkpoint a resume starts from."""
    if latest is not None:
        return f"The latest checkpoint, {latest}, holds finite values: train() resumes from it."
    if all_nonfinite:
        return ("Every checkpoint in model_dir holds NaN or Inf: delete them (or use a new model_dir) to train "
                "again from step 0.")
    return "model_dir holds no checkpoint: train() starts over."


def diverged_message(cause: str, step: int, note: str) -> str:
    """Both divergence errors' text: cause and step, nothing saved, where a resume starts (`note`), the fix."""
    return (f"{cause} at global step {step}; stopping without saving a checkpoint. {note} "
            "Lower the learning rate or check the input data.")


def _flags(variables: Sequence[Any]) -> tf.Tensor:
    """One reduce_all(is_finite) per variable, stacked: one small tensor to bring to the host."""
    return tf.stack([tf.reduce_all(tf.math.is_finite(var)) for var in variables])


_finite_flags = tf.function(_flags, autograph=False)  # traced once per layout of variables (shapes, dtypes)


def _is_float(dtype: Any) -> bool:
    dtype = tf.as_dtype(dtype)
    return dtype.is_floating


def _not_finite(value: Any) -> bool:
    """For a floating-point value (numpy's or ml_dtypes' bfloat16 and float8, which np.isfinite handles)."""
    return not bool(np.isfinite(value).all())
