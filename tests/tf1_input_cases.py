"""The numpy_input_fn / pandas_input_fn cases run by TF 2.15 (reference/make_tf1_inputs_215.py) and by us.

Plain data only (numpy, and pandas when installed), so both environments import it. CASES: name ->
(kind, keyword arguments with data named by string, batches to take or None for all). ERRORS: name
-> (kind, keyword arguments, "make" or "call": when 2.15 raised).
"""

import numpy as np

try:
    import pandas as pd
except ImportError:  # the pandas cases are skipped without it
    pd = None

N = 5


def numpy_data():
    return {
        "a": np.arange(N, dtype=np.int64),
        "b": (np.arange(2 * N, dtype=np.float32) * 1.5).reshape(N, 2),
        "c": np.array(["p", "q", "r", "s", "t"]),
        "y": np.arange(N, dtype=np.int32) * -1,
        "y2": np.arange(N, dtype=np.float64) / 4,
        "matrix": np.arange(3 * N, dtype=np.float64).reshape(N, 3),
        "short": np.arange(N - 1, dtype=np.float32),
    }


def pandas_data():
    frame = pd.DataFrame({"a": np.arange(N, dtype=np.int64), "b": np.arange(N, dtype=np.float64) * 0.5,
                          "c": ["p", "q", "r", "s", "t"]}, index=np.arange(10, 10 + N))
    series = pd.Series(np.arange(N, dtype=np.int64) * 3, index=frame.index)
    labels = pd.DataFrame({"a": np.arange(N, dtype=np.float64), "t": np.arange(N, dtype=np.int64)}, index=frame.index)
    return {"frame": frame, "series": series, "labels": labels,
            "other_index": pd.Series(np.arange(N), index=np.arange(N))}


def arguments(kind, kwargs):
    """kwargs with every string in `data:` form replaced by that array, dict or frame."""
    data = numpy_data() if kind == "numpy" else pandas_data()

    def resolve(value):
        if isinstance(value, str) and value.startswith("data:"):
            return data[value[len("data:"):]]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    return {key: resolve(value) for key, value in kwargs.items()}


def as_json(value):
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return np.vectorize(lambda b: b.decode() if isinstance(b, bytes) else str(b), otypes=[object])(value).tolist()
    return value.tolist()


XY = {"x": {"a": "data:a", "b": "data:b", "c": "data:c"}, "y": "data:y"}
CASES = {
    "numpy_last_partial_batch_kept": ("numpy", dict(XY, batch_size=2, num_epochs=1, shuffle=False), None),
    "numpy_epochs_run_on_without_a_break": ("numpy", dict(XY, batch_size=3, num_epochs=2, shuffle=False), None),
    "numpy_forever_full_batches": ("numpy", dict(XY, batch_size=2, num_epochs=None, shuffle=False), 4),
    "numpy_array_x_is_a_bare_tensor": ("numpy", dict(x="data:matrix", y="data:y", batch_size=2, shuffle=False), None),
    "numpy_dict_y": ("numpy", dict(x={"a": "data:a"}, y={"y": "data:y", "y2": "data:y2"}, batch_size=4,
                                   shuffle=False), None),
    "numpy_no_y_gives_features_only": ("numpy", dict(x={"b": "data:b"}, batch_size=3, shuffle=False), None),
    "pandas_series_y": ("pandas", dict(x="data:frame", y="data:series", batch_size=2, shuffle=False), None),
    "pandas_dataframe_y_may_reuse_a_feature_name": ("pandas", dict(x="data:frame", y="data:labels", batch_size=3,
                                                                   shuffle=False), None),
    "pandas_no_y_forever": ("pandas", dict(x="data:frame", batch_size=2, num_epochs=None, shuffle=False), 3),
}
ERRORS = {
    "numpy_shuffle_not_given": ("numpy", dict(XY), "make"),
    "numpy_shuffle_not_a_bool": ("numpy", dict(XY, shuffle=1), "make"),
    "numpy_x_a_list": ("numpy", dict(x=[1, 2, 3], shuffle=False), "call"),
    "numpy_x_empty_dict": ("numpy", dict(x={}, shuffle=False), "call"),
    "numpy_y_empty_dict": ("numpy", dict(x={"a": "data:a"}, y={}, shuffle=False), "call"),
    "numpy_x_and_y_share_a_key": ("numpy", dict(x={"a": "data:a"}, y={"a": "data:y"}, shuffle=False), "call"),
    "numpy_lengths_differ": ("numpy", dict(x={"a": "data:a", "m": "data:matrix"}, y="data:short", shuffle=False),
                             "call"),
    "pandas_shuffle_not_given": ("pandas", dict(x="data:frame"), "make"),
    "pandas_target_column_not_a_string": ("pandas", dict(x="data:frame", y="data:series", shuffle=False,
                                                         target_column=3), "make"),
    "pandas_target_column_is_a_feature": ("pandas", dict(x="data:frame", y="data:series", shuffle=False,
                                                         target_column="a"), "make"),
    "pandas_indexes_differ": ("pandas", dict(x="data:frame", y="data:other_index", shuffle=False), "make"),
}
