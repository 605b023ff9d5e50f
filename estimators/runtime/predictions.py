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
            raise ValueError(f"predict_keys {sorted(missing)} are not among the predictions {sorted(rows)}.")
        rows = {k: rows[k] for k in keys}
    starts = np.concatenate([[0], np.cumsum(step_rows)]).astype(int)
    for start, end in zip(starts[:-1], starts[1:], strict=True):
        keep = mask[start:end]
        if not keep.any():
            continue
        part = tf.nest.map_structure(lambda a, s=start, e=end, k=keep: a[s:e][k], rows)
        if not single:
            yield part
            continue
        for i in range(int(keep.sum())):
            yield tf.nest.map_structure(lambda a, i=i: a[i], part)
