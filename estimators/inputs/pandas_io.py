"""pandas_input_fn: an input_fn over a pandas DataFrame's columns and a Series or DataFrame of labels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from estimators.inputs.feeding import as_column, as_returned, stream
from estimators.inputs.numpy_io import check_shuffle


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as err:
        raise TypeError("pandas_input_fn needs pandas, which is not installed: pip install pandas") from err
    return pandas


def pandas_input_fn(x: Any, y: Any = None, batch_size: int = 128, num_epochs: int | None = 1,
                    shuffle: bool | None = None, queue_capacity: int | None = 1000, num_threads: int = 1,
                    target_column: str = "target") -> Callable[[], Any]:
    """An input_fn whose Dataset gives ({column: batch}, labels) batches of a DataFrame, as 2.15's gave tensors.

    `x`: a DataFrame (features keyed by its column names). `y`: None (features only), a Series
    (labels are one tensor) or a DataFrame (labels keyed by its columns, which may repeat x's), with
    x's index. `target_column` must be a string that is not a column of x whenever y is given (2.15
    stored y in x under that name). `queue_capacity` None: x's length (4 times it when shuffling).
    `num_epochs`, `shuffle` (required, a bool) and `num_threads` (unused) as for numpy_input_fn.
    Everything is checked here, as in 2.15; the data is copied now, so later changes to x do not
    reach the input_fn.
    """
    pd = _pandas()
    check_shuffle(shuffle)
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    if not isinstance(x, pd.DataFrame):
        raise TypeError(f"pandas_input_fn's x must be a pandas DataFrame, got {type(x).__name__}")
    labels = None
    if y is not None:
        if not isinstance(y, (pd.Series, pd.DataFrame)):
            raise TypeError(f"pandas_input_fn's y must be a pandas Series or DataFrame, got {type(y).__name__}")
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame already has a column "
                             f"with that name: {x.columns}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
        if isinstance(y, pd.DataFrame):
            labels = {column: as_column(y[column].to_numpy()) for column in y.columns}
        else:
            labels = as_column(y.to_numpy())
    features = {column: as_column(x[column].to_numpy()) for column in x.columns}
    del num_threads
    if queue_capacity is None:
        queue_capacity = 4 * len(x) if shuffle else len(x)

    def input_fn() -> Any:
        element = features if labels is None else (features, labels)
        return as_returned(stream(element, batch_size, num_epochs, shuffle, queue_capacity))

    return input_fn
