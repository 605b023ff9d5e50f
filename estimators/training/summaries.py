"""TensorBoard scalars under model_dir, one writer per directory.

Written with the core `tf.summary.write` and the scalars plugin's metadata, so TensorBoard
reads them as it reads `tf.summary.scalar`, without the tensorboard package installed.
"""

from __future__ import annotations

import os

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
)


class SummaryWriters:
    """Lazily opened tf.summary writers keyed by sub-directory of model_dir."""

    def __init__(self, model_dir: str):
        self._model_dir = model_dir
        self._writers: dict[str, tf.summary.SummaryWriter] = {}

    def scalars(self, subdir: str, step: int, values: dict) -> None:
        """Writes each name -> float as a TensorBoard scalar at `step` in model_dir/subdir."""
        writer = self._writers.get(subdir)
        if writer is None:
            logdir = os.path.join(self._model_dir, subdir) if subdir else self._model_dir
            writer = self._writers[subdir] = tf.summary.create_file_writer(logdir)
        with writer.as_default(step=step):
            for name, value in values.items():
                tf.summary.write(name, tf.constant(float(value), tf.float32), metadata=_SCALAR_METADATA)
        writer.flush()
