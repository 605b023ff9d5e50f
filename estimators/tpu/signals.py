"""Stopping and padding signals for the last, partial batch of a finite input (2.15's TPU evaluation/prediction).

A compiled TPU loop needs every batch at full, static size and cannot see the end of a dataset. 2.15
therefore turned the dataset's elements into {"features", "labels", "signals"}: `signals["stopping"]`
([batch, 1] bool) is False for every real batch and True for extra batches appended after the data
(copies of the first batch), which tell the loop to stop; with padding, a short last batch is padded
with zeros to the full size and `signals["padding_mask"]` ([batch] int32) marks the padded rows
with 1, so that the host can slice them off again (`PaddingSignals.slice_tensor_or_dict`).

`InputsWithStoppingSignals` is for graph mode (an initializable iterator, as 2.15 used it).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

FEATURES, LABELS, SIGNALS = "features", "labels", "signals"
STOPPING, PADDING_MASK = "stopping", "padding_mask"


def _split(element: Any) -> tuple[Any, Any]:
    """An input_fn element as (features, labels): a 2-tuple is both, anything else is features only."""
    if isinstance(element, tuple):
        features, labels = element
        return features, labels
    return element, None


class StopSignals:
    """The stop flag of one batch, as a [batch_size, 1] bool tensor (plus the padding mask, if any)."""

    NON_STOPPING_SIGNAL = False
    STOPPING_SIGNAL = True

    def __init__(self, stop: bool, batch_size: int, padding_mask: tf.Tensor | None = None):
        self._stop = stop
        self._batch_size = batch_size
        self._padding_mask = padding_mask

    def as_dict(self) -> dict[str, tf.Tensor]:
        make = tf.ones if self._stop else tf.zeros
        signals = {STOPPING: make([self._batch_size, 1], dtype=tf.bool)}
        if self._padding_mask is not None:
            signals[PADDING_MASK] = self._padding_mask
        return signals

    @staticmethod
    def as_scalar_stopping_signal(signals: dict) -> tf.Tensor:
        """The batch's stop flag as a scalar (every row carries the same one)."""
        return tf.identity(signals[STOPPING][0][0])

    @staticmethod
    def should_stop(scalar_stopping_signal: Any) -> Any:
        """Whether the flag says stop: a bool tensor for a tensor, a Python bool for a fetched value."""
        if isinstance(scalar_stopping_signal, tf.Tensor):
            return tf.math.logical_and(scalar_stopping_signal, StopSignals.STOPPING_SIGNAL)
        return bool(scalar_stopping_signal)


class PaddingSignals:
    """Padding a short batch to the full batch size, and slicing the padding off again."""

    @staticmethod
    def pad_features_and_labels(features: Any, labels: Any, batch_size: int) -> tuple[tf.Tensor, Any, Any]:
        """(padding_mask, features, labels), every tensor padded with zeros along axis 0 to `batch_size`."""
        real = tf.shape(PaddingSignals._find_any_tensor(features))[0]
        full = tf.constant(batch_size, tf.int32)
        check = tf.debugging.assert_greater_equal(
            full, real, message="The real batch size should not be greater than batch_size.")
        with tf.control_dependencies([check]):
            missing = full - real

        def pad(tensor: tf.Tensor) -> tf.Tensor:
            rank = len(tensor.shape)
            if rank == 0:
                raise ValueError(f"Cannot pad a scalar ({tensor}): every input tensor needs a batch dimension.")
            paddings = tf.stack([[0, missing]] + [[0, 0]] * (rank - 1))
            padded = tf.pad(tensor, paddings)
            padded.set_shape((batch_size,) + tuple(tensor.shape[1:]))
            return padded

        features = tf.nest.map_structure(pad, features)
        if labels is not None:
            labels = tf.nest.map_structure(pad, labels)
        return PaddingSignals._padding_mask(real, missing, batch_size), features, labels

    @staticmethod
    def slice_tensor_or_dict(tensor_or_dict: Any, signals: dict) -> Any:
        """The real rows of a padded batch (its first rows), unless the batch is full or a stop batch."""
        mask = signals[PADDING_MASK]
        batch = tf.shape(mask)[0]
        real = batch - tf.math.reduce_sum(mask)

        def same_batch(tensor: tf.Tensor) -> tf.Tensor:
            with tf.control_dependencies([tf.math.equal(batch, tensor.shape[0])]):
                return tf.identity(tensor)

        def real_rows(tensor: tf.Tensor) -> tf.Tensor:
            return same_batch(tensor)[0:real]

        # the padded rows come last: the real part of the mask must be all zeros
        real_mask_clear = tf.math.equal(tf.math.reduce_sum(real_rows(mask)), 0)
        with tf.control_dependencies([real_mask_clear]):
            stop = StopSignals.should_stop(StopSignals.as_scalar_stopping_signal(signals))
        keep_whole = tf.math.logical_or(stop, tf.math.equal(tf.math.reduce_sum(mask), 0))

        def slice_one(tensor: tf.Tensor) -> tf.Tensor:
            return tf.compat.v1.cond(keep_whole, lambda: same_batch(tensor), lambda: real_rows(tensor))

        return tf.nest.map_structure(slice_one, tensor_or_dict)

    @staticmethod
    def _find_any_tensor(features: Any) -> tf.Tensor:
        for item in tf.nest.flatten(features):
            if isinstance(item, tf.Tensor):
                return item
        raise ValueError("Cannot find any Tensor in features dict.")

    @staticmethod
    def _padding_mask(real: tf.Tensor, missing: tf.Tensor, batch_size: int) -> tf.Tensor:
        mask = tf.concat([tf.zeros((real,), tf.int32), tf.ones((missing,), tf.int32)], axis=0)
        mask.set_shape((batch_size,))
        return mask


class Inputs:
    """What input_fn returned: (features, labels), or a dataset read through an initializable iterator."""

    def __init__(self, features: Any = None, labels: Any = None, dataset: tf.data.Dataset | None = None,
                 signals: Any = None):
        if dataset is not None and (features is not None or labels is not None or signals is not None):
            raise RuntimeError("Give either a dataset or (features, labels, signals), not both.")
        self._features, self._labels, self._signals = features, labels, signals
        self._dataset = dataset
        self._iterator = None

    @staticmethod
    def from_input_fn(return_values: Any) -> Inputs:
        if isinstance(return_values, tf.data.Dataset):
            return Inputs(dataset=return_values)
        return Inputs(*_split(return_values))

    @property
    def is_dataset(self) -> bool:
        return self._dataset is not None

    @property
    def dataset(self) -> tf.data.Dataset | None:
        return self._dataset

    def dataset_initializer(self) -> tf.Operation:
        """Makes the iterator; run the returned op before reading `features_and_labels()`."""
        self._iterator = tf.compat.v1.data.make_initializable_iterator(self._dataset)
        return self._iterator.initializer

    def features_and_labels(self) -> tuple[Any, Any]:
        if not self.is_dataset:
            return self._features, self._labels
        if self._iterator is None:
            raise RuntimeError("Call dataset_initializer() before features_and_labels().")
        return _split(self._iterator.get_next())

    def signals(self) -> Any:
        return self._signals


class InputsWithStoppingSignals(Inputs):
    """A dataset whose batches carry stopping signals (and, with `add_padding`, are padded to `batch_size`).

    After the data come stop batches: one, or with `num_invocations_per_step` > 1 (several batches
    per loop step) 2 * n - 1 of them with an all-ones padding mask, so that however the data's
    batches fall into steps, one whole step is made of stop batches.
    Read it as: `features_and_labels()` first, then `signals()` for the same element.
    """

    def __init__(self, dataset: tf.data.Dataset, batch_size: int, add_padding: bool = False,
                 num_invocations_per_step: int = 1):
        if dataset is None:
            raise ValueError("InputsWithStoppingSignals needs a dataset.")
        data = dataset.map(self.insert_stopping_signal(False, batch_size, add_padding))
        stops = dataset.take(1).map(self.insert_stopping_signal(True, batch_size, add_padding))
        if num_invocations_per_step > 1:
            stops = stops.repeat(2 * num_invocations_per_step - 1).map(_mask_everything)
        super().__init__(dataset=data.concatenate(stops).prefetch(2))
        self._current = None

    def features_and_labels(self) -> tuple[Any, Any]:
        if self._current is not None:
            raise RuntimeError("The previous element's signals were not read: call features_and_labels(), "
                               "then signals().")
        element = self._iterator.get_next()
        self._current = element
        return element[FEATURES], element.get(LABELS)

    def signals(self) -> dict:
        if self._current is None:
            raise RuntimeError("Call features_and_labels() before signals().")
        signals, self._current = self._current[SIGNALS], None
        return signals

    @staticmethod
    def insert_stopping_signal(stop: bool, batch_size: int, add_padding: bool = False):
        """A dataset.map function: element -> {"features", "labels" (if any), "signals"}."""

        def _map_fn(*args: Any) -> dict:
            features, labels = _split(args[0] if len(args) == 1 else args)
            padding_mask = None
            if add_padding:
                padding_mask, features, labels = PaddingSignals.pad_features_and_labels(features, labels, batch_size)
            element = {FEATURES: features}
            if labels is not None:
                element[LABELS] = labels
            element[SIGNALS] = StopSignals(stop=stop, batch_size=batch_size, padding_mask=padding_mask).as_dict()
            return element

        return _map_fn


def _mask_everything(element: dict) -> dict:
    """A stop batch appended only to fill a step: every row is padding."""
    signals = dict(element[SIGNALS])
    if PADDING_MASK in signals:
        signals[PADDING_MASK] = tf.ones_like(signals[PADDING_MASK])
    return {**element, SIGNALS: signals}


# 2.15's names (tpu_estimator._Inputs, ...)
_Inputs = Inputs
_InputsWithStoppingSignals = InputsWithStoppingSignals
_StopSignals = StopSignals
_PaddingSignals = PaddingSignals
