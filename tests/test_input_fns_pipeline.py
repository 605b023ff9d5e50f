"""Behaviour of the shared tf.data pipeline (sharding, shuffling, batching) on tiny arrays."""

import numpy as np
import pytest
import tensorflow as tf

from input_fns import pipeline

N = 10


def _arrays(n: int = N) -> tuple[np.ndarray, np.ndarray]:
    """Images whose every pixel equals the example index, so order is visible in labels too."""
    images = np.broadcast_to(np.arange(n, dtype=np.uint8)[:, None, None, None], (n, 2, 2, 1)).copy()
    return images, np.arange(n, dtype=np.int32)


def _labels(ds: tf.data.Dataset, batches: int | None = None) -> list[int]:
    if batches is not None:
        ds = ds.take(batches)
    return [int(v) for _, labels in ds.as_numpy_iterator() for v in labels]


def test_train_batches_have_static_shape_and_raw_dtypes():
    ds = pipeline.make_dataset(*_arrays(), "train", {"batch_size": 4})
    images, labels = ds.element_spec
    assert images.shape == (4, 2, 2, 1) and images.dtype == tf.uint8
    assert labels.shape == (4,) and labels.dtype == tf.int32


def test_train_order_is_shuffled():
    ds = pipeline.make_dataset(*_arrays(), "train", {"batch_size": N}, seed=1)
    assert _labels(ds, 1) != list(range(N))


def test_train_shuffle_is_reproducible_with_seed():
    def first_epoch() -> list[int]:
        return _labels(pipeline.make_dataset(*_arrays(), "train", {"batch_size": N}, seed=7), 1)

    assert first_epoch() == first_epoch()


def test_train_repeats_every_example_each_epoch():
    ds = pipeline.make_dataset(*_arrays(), "train", {"batch_size": 5}, seed=0)
    seen = _labels(ds, 6)  # three epochs
    assert sorted(seen) == sorted(list(range(N)) * 3)


def test_train_shards_by_input_context():
    def shard(i: int) -> set[int]:
        ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=i, num_replicas_in_sync=2)
        return set(
            _labels(
                pipeline.make_dataset(*_arrays(), "train", {"batch_size": 5, "context": ctx}),
                1,
            )
        )

    first, second = shard(0), shard(1)
    assert first.isdisjoint(second) and first | second == set(range(N))


def test_train_ignores_single_pipeline_context():
    ctx = tf.distribute.InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=8)
    ds = pipeline.make_dataset(*_arrays(), "train", {"batch_size": N, "context": ctx})
    assert sorted(_labels(ds, 1)) == list(range(N))


def test_eval_shards_whole_batches_round_robin_across_pipelines():
    def shard(i: int) -> list[int]:
        ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=i, num_replicas_in_sync=2)
        return _labels(pipeline.make_dataset(*_arrays(), "eval", {"batch_size": 3, "context": ctx}))

    assert shard(0) == [0, 1, 2, 6, 7, 8]
    assert shard(1) == [3, 4, 5, 9]


def test_eval_yields_each_example_once_in_order_with_partial_last_batch():
    ds = pipeline.make_dataset(*_arrays(), "eval", {"batch_size": 4})
    sizes = [len(labels) for _, labels in ds.as_numpy_iterator()]
    assert sizes == [4, 4, 2]
    assert _labels(ds) == list(range(N))


def test_eval_images_match_their_labels():
    ds = pipeline.make_dataset(*_arrays(), "eval", {"batch_size": 3})
    for images, labels in ds.as_numpy_iterator():
        np.testing.assert_array_equal(images[:, 0, 0, 0], labels)


def test_infer_yields_images_only():
    ds = pipeline.make_dataset(*_arrays(), "infer", {"batch_size": 4})
    assert isinstance(ds.element_spec, tf.TensorSpec)
    assert [int(b[0, 0, 0, 0]) for b in ds.as_numpy_iterator()] == [0, 4, 8]


def test_augment_fn_is_applied_in_train_only():
    def invert(image: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        return 255 - image

    train = pipeline.make_dataset(*_arrays(), "train", {"batch_size": N}, augment=invert)
    images, labels = next(train.as_numpy_iterator())
    np.testing.assert_array_equal(images[:, 0, 0, 0], 255 - labels)


@pytest.mark.parametrize("batch_size", [None, 0, -1, 2.0, True])
def test_invalid_batch_size_is_rejected(batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        pipeline.make_dataset(*_arrays(), "eval", {"batch_size": batch_size})


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="predict"):
        pipeline.make_dataset(*_arrays(), "predict", {"batch_size": 2})
