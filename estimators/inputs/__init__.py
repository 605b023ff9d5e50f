"""tf.compat.v1.estimator.inputs: input_fns over in-memory numpy arrays and pandas DataFrames.

`estimators.inputs.numpy_input_fn(...)` and `estimators.inputs.pandas_input_fn(...)` take 2.15's
arguments and raise its errors; the input_fn they return gives a tf.data.Dataset (2.15 gave queue
tensors), built in whatever graph it is called in, so the TF2 and the graph-and-session paths both
take it. See estimators/inputs/feeding.py for the order of the examples.
"""

from estimators.inputs.numpy_io import numpy_input_fn
from estimators.inputs.pandas_io import pandas_input_fn

__all__ = ["numpy_input_fn", "pandas_input_fn"]
