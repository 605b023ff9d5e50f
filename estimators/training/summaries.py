"""TensorBoard scalars under model_dir, one writer per directory.

Written with the core `tf.summary.write` and the scalars plugin's metadata, so TensorBoard
reads them as it reads `tf.summary.scalar`, without the tensorboard package installed.
"""

from __future__ import annotations

import os
import socket
import time

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import summary_pb2
from tensorflow.core.util import event_pb2

from estimators.training.step_summaries import SCALAR_METADATA


class SummaryWriters:
    """Lazily opened tf.summary writers keyed by sub-directory of model_dir."""

    def __init__(self, model_dir: str):
        self._model_dir = model_dir
        self._writers: dict[str, tf.summary.SummaryWriter] = {}

    def resumed(self, subdir: str, step: int) -> None:
        """Marks a restart at `step` (TF1's SessionLog START): TensorBoard drops this directory's older
        points past `step`, written by a run that died after its last checkpoint, so curves neither
        jump back nor double up."""
        logdir = os.path.join(self._model_dir, subdir) if subdir else self._model_dir
        tf.io.gfile.makedirs(logdir)
        now = time.time()
        name = f"events.out.tfevents.{now:.6f}.{socket.gethostname()}.{os.getpid()}.resume"
        with tf.io.TFRecordWriter(os.path.join(logdir, name)) as records:
            records.write(event_pb2.Event(wall_time=now, file_version="brain.Event:2").SerializeToString())
            start = event_pb2.Event(wall_time=now, step=step + 1,
                                    session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START))
            records.write(start.SerializeToString())

    def writer(self, subdir: str = "") -> tf.summary.SummaryWriter:
        """The writer for model_dir/subdir, opened on first use."""
        writer = self._writers.get(subdir)
        if writer is None:
            logdir = os.path.join(self._model_dir, subdir) if subdir else self._model_dir
            writer = self._writers[subdir] = tf.summary.create_file_writer(logdir)
        return writer

    def raw(self, subdir: str, step: int, summary: summary_pb2.Summary) -> None:
        """Writes a Summary proto as one event at `step` in model_dir/subdir."""
        writer = self.writer(subdir)
        with writer.as_default(step=step):
            tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=step)
        writer.flush()

    def scalars(self, subdir: str, step: int, values: dict) -> None:
        """Writes each name -> float as a TensorBoard scalar at `step` in model_dir/subdir."""
        writer = self.writer(subdir)
        with writer.as_default(step=step):
            for name, value in values.items():
                tf.summary.write(name, tf.constant(float(value), tf.float32), metadata=SCALAR_METADATA)
        writer.flush()


def scalar_value(value: summary_pb2.Summary.Value) -> float | None:
    """An event's summary value as a float: a TF1 simple_value or a one-element numeric tensor; else None."""
    if value.HasField("simple_value"):
        return float(value.simple_value)
    if value.HasField("tensor"):
        try:
            array = tf.make_ndarray(value.tensor)
        except Exception:  # noqa: BLE001 - a kind of tensor TensorFlow cannot turn into numpy
            return None
        if array.size == 1 and (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
            return float(array.reshape(()))
    return None
