"""Per-device input iterators without tf.data's autotuning thread, so that freeing one takes milliseconds.

tf.distribute feeds several local devices (MirroredStrategy over GPUs, the tests' 8 logical CPUs)
through a multi-device iterator that makes one small dataset per device (a remote call into the
shared buffer, then a fixed prefetch) with TensorFlow's default options: autotuning on. Each of their
iterators then runs a tf.data autotuning thread (`model::Model::OptimizeLoop`), and in TF 2.21 an
iterator's destructor waits for that thread's timed wait to run out instead of waking it (seen with
gdb: `~RootDataset::Iterator` -> `~LogicalThreadWrapper`, the thread in `OptimizeLoop`'s
`CondVar::Wait`); the period doubles while the iterator lives, and the 8 iterators are freed one after
the other. Measured here (an 8-device stream read 70 steps, 8 s idle, then deleted; 4 runs each):
1.8 / 0.04 / 1.8 / 32.7 s as TensorFlow makes them, 0.01-0.03 s with autotuning off on the per-device
datasets. Those datasets have nothing to tune (their prefetch buffer is a fixed size); the input
pipeline the program built (input_fn's dataset) keeps its own options, autotuning included.

Installed for the length of each engine call (compat/scoped_patches.py), like the engine's other
TensorFlow patches: iterators a program makes itself outside engine calls are TensorFlow's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf
from tensorflow.python.data.ops import multi_device_iterator_ops

from estimators.compat import scoped_patches

_NAME = "_create_device_dataset"  # multi_device_iterator_ops' function that makes each device's dataset
_MARK = "_estimators_without_autotune"


def _without_autotune(create: Callable[..., tf.data.Dataset]) -> Callable[..., tf.data.Dataset]:
    """`create`, whose per-device dataset is returned with tf.data autotuning off."""

    def create_device_dataset(*args: Any, **kwargs: Any) -> tf.data.Dataset:
        options = tf.data.Options()
        options.autotune.enabled = False
        return create(*args, **kwargs).with_options(options)

    setattr(create_device_dataset, _MARK, True)
    return create_device_dataset


def install() -> None:
    """Replaces the per-device dataset maker for the engine call (idempotent; nothing if TensorFlow lacks it)."""
    original = vars(multi_device_iterator_ops).get(_NAME)
    if callable(original) and not getattr(original, _MARK, False):
        scoped_patches.replace(multi_device_iterator_ops, _NAME, _without_autotune(original))
