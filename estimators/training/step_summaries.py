"""Summaries written inside training steps: model_fn's own and the engine's loss and learning rate.

tf.estimator wrote model_fn's summaries (tf.summary / tf.compat.v1.summary) and its `loss` from
inside the step, at the step's global step (after the step), on the first step of a train() call
and then every save_summary_steps. Steps run inside compiled loops here, so the record condition
is a tensor: the default writer, step and record_if are set around strategy.run, and replica
threads inherit them (TF records only the first replica's).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

SCALAR_METADATA = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


@dataclass
class StepSummaries:
    """Where and when train steps write summaries (made by the chief; other workers write none)."""

    writer: tf.summary.SummaryWriter
    every_steps: int
    global_step: tf.Variable
    first_step: tf.Variable = field(default=None)  # the first step of the current train() call

    def __post_init__(self) -> None:
        if self.first_step is None:
            with tf.init_scope():
                self.first_step = tf.Variable(1, dtype=tf.int64, trainable=False, name="summaries_first_step")

    def starting_at(self, step: int) -> None:
        """A train() call starts after global step `step`: its first step records, then every N."""
        self.first_step.assign(step + 1)

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Default writer, step (the step being run, after it) and record_if for one step (graph code)."""
        step = self.global_step.read_value() + 1
        since_first = step - self.first_step
        record = tf.logical_and(since_first >= 0, tf.equal(since_first % self.every_steps, 0))
        with self.writer.as_default(step=step), tf.summary.record_if(record):
            yield

    @staticmethod
    def scalar(name: str, value: tf.Tensor) -> None:
        """A scalar under the current recording (no tensorboard package needed)."""
        tf.summary.write(name, tf.cast(value, tf.float32), metadata=SCALAR_METADATA)


def write_v1_summaries(summaries: list) -> None:
    """model_fn's tf.compat.v1.summary ops (serialized Summary protos) into the current default writer."""
    if summaries:
        tf.summary.experimental.write_raw_pb(tf.compat.v1.summary.merge(summaries))
