"""The stream numpy_input_fn and pandas_input_fn read: examples in order, epoch after epoch, then batches.

tf.estimator 2.15 fed the rows through a queue: one continuous stream of num_epochs passes (a batch
may hold the end of one pass and the start of the next), shuffled by a RandomShuffleQueue of
queue_capacity rows when asked, dequeued `batch_size` at a time; with num_epochs set the last batch
could be short, with num_epochs=None every batch was full (a static batch dimension). The same
stream as tf.data: repeat, then shuffle with a queue_capacity buffer, then batch (dropping a short
remainder only when the stream never ends, where there is none). Shuffling follows TensorFlow's
global seed, so `RunConfig(tf_random_seed=...)` makes it repeatable; without shuffling the order is
the arrays' order (2.15's too, with one thread; more threads made it nondeterministic there and are
not used here).
Called by the engine, these input_fns give the Dataset; called by a program's own code while it builds a TF1
graph (`features, labels = input_fn()` under `tf.Graph().as_default()`), they give its next batch as tensors,
as 2.15's queue dequeue did (evaluated again per step, OutOfRangeError after the last batch).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import tensorflow as tf

_engine = threading.local()


@contextlib.contextmanager
def called_by_engine() -> Iterator[None]:
    """Marks the input_fn calls the engine makes on this thread: they get the Dataset itself."""
    depth = getattr(_engine, "depth", 0)
    _engine.depth = depth + 1
    try:
        yield
    finally:
        _engine.depth = depth


def as_returned(dataset: tf.data.Dataset) -> Any:
    """`dataset`, or its next element's tensors for a program's own call while it builds a TF1 graph."""
    if getattr(_engine, "depth", 0) or tf.executing_eagerly() or tf.compat.v1.get_default_graph().building_function:
        return dataset
    return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()


def as_column(values: Any) -> np.ndarray:
    """An array tf.data can slice: numpy as is, strings of an object array as a string array."""
    array = np.asarray(values)
    if array.dtype == object:
        try:
            array = array.astype(str) if all(isinstance(v, str) for v in array.ravel()) else array
        except (TypeError, ValueError):
            pass
    return array


def stream(element: Any, batch_size: int, num_epochs: int | None, shuffle: bool,
           shuffle_buffer: int | None) -> tf.data.Dataset:
    """Batches of `element` (a structure of arrays of equal length) as 2.15's queue gave them."""
    dataset = tf.data.Dataset.from_tensor_slices(element)
    dataset = dataset.repeat(num_epochs)
    if shuffle:
        rows = len(tf.nest.flatten(element)[0])
        dataset = dataset.shuffle(int(shuffle_buffer) if shuffle_buffer else max(rows, 1))
    return dataset.batch(batch_size, drop_remainder=num_epochs is None)
