"""Scalars a model_fn reports from its train step: shown on the progress line and written to TensorBoard.

    train_metrics.report("accuracy", batch_accuracy)   # inside model_fn, in TRAIN

Why a channel of its own: a tf.summary written inside the step fails once XLA compiles the step
(jit_compile: "Uninitialized arguments" in write_summary), and the progress line is drawn by the
engine between loops. So a reported value leaves the step as one of its outputs, as the loss does,
and the engine writes and shows it outside the compiled step:

- TensorBoard: the mean over replicas (weighted, see report), tagged `name` in model_dir, at the steps `loss` is written
  (the first step of train(), then every save_summary_steps), by the chief;
- the progress line (and LoopInfo.metrics, for hooks): the mean over the latest loop's steps.

Nothing is reported unless model_fn calls `report`: a program that does not gets no new tag, no new
progress value. Outside the engine's TF2 train step (EVAL and PREDICT calls, the graph path, a
model_fn called by hand) `report` does nothing.

Not TPUEstimatorSpec.host_call, which also runs outside the step: returning one turns off the engine's
`learning_rate` summary (2.15 wrote none beside a host_call) and cannot reach the progress line; this one
channel feeds both.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from estimators.compat.call_context import current_call

__all__ = ["ENGINE_TAGS", "report", "reported"]

ENGINE_TAGS = frozenset({"loss", "learning_rate", "global_step/sec", "examples/sec"})  # what train() writes itself


def report(name: str, value: Any, weight: Any = None) -> None:
    """Reports this replica's scalar `value` (e.g. its batch's accuracy) under `name` for the current train step.

    With several replicas the engine shows their mean weighted by `weight` (default 1: a plain mean). Pass
    the rows a per-row mean was taken over, so a short last global batch (replicas of 3, 3, 2, 2 rows, or
    none at all) still gives the global batch's value; a replica of weight 0 counts for nothing.
    """
    call = current_call()
    if call is None or not call.training:
        return
    if not isinstance(name, str) or not name or name in ENGINE_TAGS:
        raise ValueError(f"train_metrics.report needs a name other than {sorted(ENGINE_TAGS)} (train() writes "
                         f"those itself), got {name!r}.")
    if name in call.train_metrics:
        raise ValueError(f"train_metrics.report({name!r}) was called twice in one model_fn call: report it once.")
    tensor = tf.convert_to_tensor(value)
    if tensor.shape.rank not in (0, None):
        raise ValueError(f"train_metrics.report({name!r}) needs a scalar (one value for this replica's batch), got "
                         f"shape {tensor.shape}: reduce it first (tf.reduce_mean).")
    value = tf.reshape(tf.cast(tensor, tf.float32), [])
    weight = tf.constant(1.0) if weight is None else tf.reshape(tf.cast(weight, tf.float32), [])
    call.train_metrics[name] = (tf.where(weight > 0, value * weight, 0.0), weight)  # an empty batch's NaN: 0


def reported(call: Any) -> dict[str, tuple[tf.Tensor, tf.Tensor]]:
    """{name: (value x weight, weight)} that a model_fn call reported, in the order it reported them (the
    engine sums both over replicas and divides)."""
    return dict(getattr(call, "train_metrics", None) or {})
