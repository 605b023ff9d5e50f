"""Predictions as predict() yields them: real rows only, one example (or one input batch) at a time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import tensorflow as tf


def split_predictions(rows: Any, mask: Any, keys: list[str] | None, single: bool,
                      batch_size: int | None) -> Iterator:
    """Real rows only, as one dict (or array) per example, or per input batch."""
    mask = np.asarray(mask)
    rows = tf.nest.map_structure(np.asarray, rows)
    if isinstance(rows, dict) and keys:
        missing = set(keys) - set(rows)
        if missing:
            raise ValueError(f"predict_keys {sorted(missing)} are not among the predictions {sorted(rows)}.")
        rows = {k: rows[k] for k in keys}
    chunk = batch_size or len(mask)
    for start in range(0, len(mask), max(chunk, 1)):
        keep = mask[start:start + chunk]
        if not keep.any():
            continue
        part = tf.nest.map_structure(lambda a, s=start, k=keep: a[s:s + chunk][k], rows)
        if not single:
            yield part
            continue
        for i in range(int(keep.sum())):
            yield tf.nest.map_structure(lambda a, i=i: a[i], part)
