"""Stopping and padding signals: a finite dataset's last partial batch padded, and stop batches after the data."""

import numpy as np
import tensorflow as tf

from estimators.tpu.signals import InputsWithStoppingSignals, PaddingSignals


def _read_all(num_samples, batch_size, sliced=False, **kwargs):
    """Every (features, signals) the inputs give, in graph mode, until the end of the dataset."""
    with tf.Graph().as_default():
        data = tf.data.Dataset.from_tensor_slices({"x": np.arange(num_samples, dtype=np.float32)}).batch(batch_size)
        inputs = InputsWithStoppingSignals(data, batch_size, **kwargs)
        init = inputs.dataset_initializer()
        features, _ = inputs.features_and_labels()
        signals = inputs.signals()
        if sliced:
            features = PaddingSignals.slice_tensor_or_dict(features, signals)
        out = []
        with tf.compat.v1.Session() as session:
            session.run(init)
            while True:
                try:
                    out.append(session.run([features, signals]))
                except tf.errors.OutOfRangeError:
                    return out


def test_data_batches_do_not_stop_and_one_stop_batch_follows():
    batches = _read_all(4, 2)
    assert [bool(s["stopping"].all()) for _, s in batches] == [False, False, True]


def test_a_short_last_batch_is_padded_with_zeros_and_masked():
    features, signals = _read_all(3, 2, add_padding=True)[1]
    assert features["x"].tolist() == [2.0, 0.0]
    assert signals["padding_mask"].tolist() == [0, 1]


def test_slicing_drops_the_padded_rows():
    features, _ = _read_all(3, 2, add_padding=True, sliced=True)[1]
    assert features["x"].tolist() == [2.0]


def test_several_batches_per_step_get_2n_minus_1_fully_masked_stop_batches():
    batches = _read_all(3, 2, add_padding=True, num_invocations_per_step=2)
    stops = [s for _, s in batches if s["stopping"].all()]
    assert len(stops) == 3
    assert all(s["padding_mask"].tolist() == [1, 1] for s in stops)
