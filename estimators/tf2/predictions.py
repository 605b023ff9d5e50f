"""Predictions as predict() yields them: real rows only, one example (or one input batch) at a time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import tensorflow as tf


def split_predictions(rows: Any, mask: Any, keys: list[str] | None, single: bool, step_rows: Any) -> Iterator:
    """Real rows only, as one dict (or array) per example, or one per step (2.15's batches: the global batch)."""
    mask = np.asarray(mask)
    rows = tf.nest.map_structure(np.asarray, rows)
    if keys and not isinstance(rows, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions: model_fn's "
                         "predictions are one tensor; leave predict_keys out, or return a dict of predictions.")
    if isinstance(rows, dict) and keys:
        missing = set(keys) - set(rows)
        if missing:
            raise ValueError(f"Expected to run at least one output from {sorted(rows)}: predict_keys {sorted(missing)} "
                             "are not among the predictions.")
        rows = {k: rows[k] for k in keys}
    starts = np.concatenate([[0], np.cumsum(step_rows)]).astype(int)
    steps = len(starts) - 1
    if single and _all_of_one_other_length(rows, len(mask), steps):
        # None follows the input batch, but they agree with each other: 2.15 took their own length as the batch.
        yield from _rows_of_each_share(rows, steps)
        return
    per_batch = _per_batch_keys(rows, len(mask), single)
    for step, (start, end) in enumerate(zip(starts[:-1], starts[1:], strict=True)):
        keep = mask[start:end]
        if not keep.any():
            continue
        if per_batch:  # whole batches: a per-batch prediction is this step's share of its values, as computed
            part = {k: _step_share(a, step, steps) if k in per_batch else a[start:end][keep] for k, a in rows.items()}
        else:
            part = tf.nest.map_structure(lambda a, s=start, e=end, k=keep: a[s:e][k], rows)
        if not single:
            yield part
            continue
        for i in range(int(keep.sum())):
            yield tf.nest.map_structure(lambda a, i=i: a[i], part)


def _per_batch_keys(rows: Any, total: int, single: bool) -> set:
    """Prediction keys whose first dimension is not the examples' (a per-batch value such as a batch sum).

    2.15 yielded them as they were in whole batches and refused them one example at a time.
    """
    if not isinstance(rows, dict):
        return set()
    odd = {k for k, a in rows.items() if not a.ndim or a.shape[0] != total}
    if odd and single:
        raise ValueError(f"Batch length of predictions should be same. {sorted(odd)[0]} has different batch length "
                         "than others. Predict with yield_single_examples=False to get whole batches.")
    return odd


def _all_of_one_other_length(rows: Any, total: int, steps: int) -> bool:
    """Every prediction has the same first dimension, divisible by the steps, other than the examples' count."""
    values = list(rows.values()) if isinstance(rows, dict) else [rows] if isinstance(rows, np.ndarray) else []
    if not values:
        return False
    lengths = {a.shape[0] if a.ndim else None for a in values}
    (length,) = lengths if len(lengths) == 1 else (None,)
    return length is not None and length != total and length % steps == 0


def _rows_of_each_share(rows: dict | np.ndarray, steps: int) -> Iterator:
    if not isinstance(rows, dict):  # one tensor of predictions
        for step in range(steps):
            yield from _step_share(rows, step, steps)
        return
    for step in range(steps):
        part = {k: _step_share(a, step, steps) for k, a in rows.items()}
        for i in range(len(next(iter(part.values())))):
            yield {k: a[i] for k, a in part.items()}


def _step_share(values: np.ndarray, step: int, steps: int) -> np.ndarray:
    if not values.ndim or values.shape[0] % steps:
        return values
    size = values.shape[0] // steps
    return values[step * size:(step + 1) * size]
