"""What evaluate() writes to model_dir/eval (or eval_<name>): tf.estimator 2.15's one Summary per evaluation.

2.15 wrote every metric of an evaluation as one Summary event at the evaluated global step:
numbers as `simple_value` (what TensorBoard and its early-stopping hooks read), arrays as tensors,
serialized Summary bytes re-tagged `key/i`; then the checkpoint path as a string tensor.
"""

from __future__ import annotations

import numbers

import numpy as np
import tensorflow as tf
from google.protobuf import message
from tensorflow.core.framework import summary_pb2

from estimators import log as logging

CHECKPOINT_PATH_TAG = "checkpoint_path"


def metrics_summary(results: dict) -> summary_pb2.Summary:
    """One Summary holding every metric of `results` (global_step and None values left out)."""
    summary = summary_pb2.Summary()
    for key, value in results.items():
        if value is None or key == "global_step":
            continue
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(value, np.ndarray):
            summary.value.add(tag=key, simple_value=float(value))
        elif isinstance(value, bytes):
            try:
                parsed = summary_pb2.Summary.FromString(value)
            except message.DecodeError:
                logging.warning("Not writing eval metric %s to the eval summary: its bytes are not a Summary.", key)
                continue
            for index, item in enumerate(parsed.value):
                item.tag = f"{key}/{index}"
            summary.value.extend(parsed.value)
        elif isinstance(value, np.ndarray):
            summary.value.add(tag=key, node_name=key, tensor=tf.make_tensor_proto(value))
        else:
            logging.warning("Not writing eval metric %s (%s) to the eval summary: expected a number, an array or "
                            "a serialized Summary.", key, type(value).__name__)
    return summary


def checkpoint_path_summary(path: str) -> summary_pb2.Summary:
    """The evaluated checkpoint's path, as 2.15 recorded it next to the metrics."""
    summary = summary_pb2.Summary()
    summary.value.add(tag=CHECKPOINT_PATH_TAG, tensor=tf.make_tensor_proto(path, dtype=tf.string))
    return summary
