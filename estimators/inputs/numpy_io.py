"""numpy_input_fn: an input_fn over a dict of numpy arrays (or one array) and their labels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from estimators.inputs.feeding import as_column, as_returned, stream

_SHUFFLE_REQUIRED = ("shuffle must be provided and explicitly set as boolean (it is recommended to set it as "
                     "True for training); got {!r}")


def check_shuffle(shuffle: Any) -> None:
    """2.15 asked for shuffle explicitly (True or False, nothing else), when the input_fn is made."""
    if not isinstance(shuffle, bool):
        raise ValueError(_SHUFFLE_REQUIRED.format(shuffle))


def _features(x: Any) -> dict:
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        return {key: as_column(value) for key, value in sorted(x.items())}
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
        return {"__direct_np_input__": as_column(x)}
    raise TypeError(f"x must be a dict or array; got {type(x).__name__}")


def _labels(y: Any, features: dict) -> dict | None:
    if y is None:
        return None
    if isinstance(y, dict):
        if not y:
            raise ValueError("y cannot be empty dict, use None instead.")
        shared = set(features) & set(y)
        if shared:
            raise ValueError(f"{len(shared)} duplicate keys are found in both x and y: {shared}")
        return {key: as_column(value) for key, value in sorted(y.items())}
    return {None: as_column(y)}


def _check_lengths(features: dict, labels: dict | None, y: Any) -> None:
    columns = list(features.values()) + list((labels or {}).values())
    if len({len(column) for column in columns}) == 1:
        return
    shapes_y = None if labels is None else (
        {key: value.shape for key, value in labels.items()} if isinstance(y, dict) else np.shape(y))
    raise ValueError(
        "Length of tensors in x and y is mismatched. All elements in x and y must have the same length.\n"
        f"Shapes in x: { {key: value.shape for key, value in features.items()} }\nShapes in y: {shapes_y}\n")


def numpy_input_fn(x: Any, y: Any = None, batch_size: int = 128, num_epochs: int | None = 1,
                   shuffle: bool | None = None, queue_capacity: int = 1000,
                   num_threads: int = 1) -> Callable[[], Any]:
    """An input_fn whose Dataset gives (features, labels) batches of numpy data, as 2.15's gave tensors.

    `x`: a dict of arrays (features keep its keys) or one array (features are then one tensor).
    `y`: None (the Dataset gives features only), an array (labels are one tensor) or a dict of
    arrays (labels keep its keys, none of them a key of x). Every array has the same length.
    `num_epochs`: passes over the data (None: forever, in full batches), one continuous stream;
    `shuffle` (required, a bool): shuffle with a buffer of `queue_capacity` examples.
    `num_threads` is accepted and unused (tf.data reads in order). As in 2.15, `shuffle` is checked
    here and the data when input_fn is called: ValueError/TypeError for an empty x or y, keys in
    both, an x that is neither a dict nor an array, or arrays of different lengths.
    """
    check_shuffle(shuffle)
    del num_threads

    def input_fn() -> Any:
        features = _features(x)
        labels = _labels(y, features)
        _check_lengths(features, labels, y)
        feature_part = features if isinstance(x, dict) else features["__direct_np_input__"]
        if labels is None:
            element = feature_part
        else:
            element = (feature_part, labels if isinstance(y, dict) else labels[None])
        return as_returned(stream(element, batch_size, num_epochs, shuffle, queue_capacity))

    return input_fn
