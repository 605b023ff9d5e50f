"""What evaluate() writes to model_dir/eval (or eval_<name>): tf.estimator 2.15's one Summary per evaluation.

2.15 wrote every metric of an evaluation as one Summary event at the evaluated global step:
numbers as `simple_value` (what TensorBoard and its early-stopping hooks read), arrays as tensors,
serialized Summary bytes re-tagged `key/i`; then the checkpoint path as a string tensor.
"""

from __future__ import annotations

import numbers
import os
import socket
import threading
import time

import numpy as np
import tensorflow as tf
from google.protobuf import message
from tensorflow.core.framework import summary_pb2
from tensorflow.core.util import event_pb2

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


def write_dict_to_summary(output_dir: str, dictionary: dict, current_global_step: int) -> None:
    """Writes `dictionary` (an evaluation's metrics) as one Summary event at `current_global_step` in output_dir,
    as evaluate() writes it. One events file per directory and process, kept open and flushed after each event
    (as tf.compat.v1's FileWriterCache did), written as records so that eager and graph mode work alike."""
    with _LOCK:
        records = _RECORD_WRITERS.get(output_dir)
        if records is None:
            tf.io.gfile.makedirs(output_dir)
            now = time.time()
            name = f"events.out.tfevents.{now:.6f}.{socket.gethostname()}.{os.getpid()}.metrics"
            records = _RECORD_WRITERS[output_dir] = tf.io.TFRecordWriter(os.path.join(output_dir, name))
            records.write(event_pb2.Event(wall_time=now, file_version="brain.Event:2").SerializeToString())
        event = event_pb2.Event(wall_time=time.time(), step=int(current_global_step),
                                summary=metrics_summary(dictionary))
        records.write(event.SerializeToString())
        records.flush()


_RECORD_WRITERS: dict[str, tf.io.TFRecordWriter] = {}
_LOCK = threading.Lock()
_write_dict_to_summary = write_dict_to_summary  # tf.estimator 2.15's name (estimator._write_dict_to_summary)
