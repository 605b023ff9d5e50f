"""Synthetic data: any shape, deterministic, endless in train, learnable labels."""

import numpy as np
import tensorflow as tf

import input_fns
from input_fns import synthetic


def test_registered_default_is_fashion_mnist_shaped():
    source = input_fns.get_dataset("synthetic")
    assert (source.image_shape, source.num_classes) == ((28, 28, 1), 10)
    images, labels = source.load("test")
    assert images.shape == (synthetic.DEFAULT_NUM_EXAMPLES, 28, 28, 1) and images.dtype == np.uint8
    assert labels.dtype == np.int32 and labels.max() < 10


def test_cifar_shape_via_input_fn_option():
    fn = input_fns.get_dataset("synthetic").input_fn("train", image_shape=(32, 32, 3))
    images, labels = fn({"batch_size": 8}).element_spec
    assert images.shape == (8, 32, 32, 3) and images.dtype == tf.uint8
    assert labels.shape == (8,) and labels.dtype == tf.int32


def test_make_source_metadata_matches_requested_shape():
    source = synthetic.make_source(image_shape=(32, 32, 3), num_classes=4)
    assert (source.image_shape, source.num_classes, len(source.class_names)) == (
        (32, 32, 3),
        4,
        4,
    )
    assert source.load("train")[0].shape[1:] == (32, 32, 3)


def test_eval_yields_num_examples_once():
    fn = input_fns.get_dataset("synthetic").input_fn("eval", num_examples=10)
    assert sum(len(labels) for _, labels in fn({"batch_size": 4}).as_numpy_iterator()) == 10


def test_train_repeats_forever():
    fn = input_fns.get_dataset("synthetic").input_fn("train", num_examples=3)
    batches = list(fn({"batch_size": 2}).take(10).as_numpy_iterator())
    assert len(batches) == 10


def test_same_seed_gives_same_data_and_other_seed_differs():
    first, again, other = (synthetic.load("test", seed=s, num_examples=8)[0] for s in (1, 1, 2))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_train_and_test_splits_differ():
    assert not np.array_equal(synthetic.load("train")[0], synthetic.load("test")[0])


def _flat(images: np.ndarray) -> np.ndarray:
    return images.reshape(len(images), -1).astype(np.float32)


def test_labels_are_learnable_by_nearest_class_mean():
    train_x, train_y = synthetic.load("train")
    test_x, test_y = synthetic.load("test")
    means = np.stack([_flat(train_x)[train_y == c].mean(axis=0) for c in range(10)])
    distances = ((_flat(test_x)[:, None, :] - means[None]) ** 2).sum(axis=-1)
    assert (distances.argmin(axis=1) == test_y).mean() > 0.95
