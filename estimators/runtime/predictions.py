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
    if isinstance(rows, dict) and keys:
        missing = set(keys) - set(rows)
        if missing:
            raise ValueError(f"Expected to run at least one output from {sorted(rows)}: predict_keys {sorted(missing)} "
                             "are not among the predictions.")
        rows = {k: rows[k] for k in keys}
    starts = np.concatenate([[0], np.cumsum(step_rows)]).astype(int)
    per_batch = _per_batch_keys(rows, len(mask), single)
    steps = len(starts) - 1
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


def _step_share(values: np.ndarray, step: int, steps: int) -> np.ndarray:
    if not values.ndim or values.shape[0] % steps:
        return values
    size = values.shape[0] // steps
    return values[step * size:(step + 1) * size]
