"""The dataset registry and the DatasetSource.input_fn contract."""

import pytest
import tensorflow as tf

import input_fns
from input_fns import registry


def test_builtin_datasets_are_registered():
    assert input_fns.dataset_names() == ["cifar10", "fashion_mnist", "synthetic"]


def test_unknown_dataset_error_lists_choices():
    with pytest.raises(ValueError, match=r"mnist_typo.*cifar10.*fashion_mnist.*synthetic"):
        input_fns.get_dataset("mnist_typo")


def test_registering_a_taken_name_is_rejected():
    with pytest.raises(ValueError, match="already registered"):
        registry.register("cifar10")(lambda: None)


def test_fashion_mnist_metadata():
    source = input_fns.get_dataset("fashion_mnist")
    assert (source.image_shape, source.num_classes) == ((28, 28, 1), 10)
    assert source.class_names[0] == "T-shirt/top" and source.class_names[9] == "Ankle boot"


def test_cifar10_metadata():
    source = input_fns.get_dataset("cifar10")
    assert (source.image_shape, source.num_classes) == ((32, 32, 3), 10)
    assert source.class_names[0] == "airplane" and source.class_names[9] == "truck"


def test_input_fn_rejects_unknown_mode():
    with pytest.raises(ValueError, match="eval"):
        input_fns.get_dataset("synthetic").input_fn("evaluate")


def test_input_fn_rejects_unknown_option_when_built():
    with pytest.raises(TypeError, match="imag_shape"):
        input_fns.get_dataset("synthetic").input_fn("train", imag_shape=(32, 32, 3))


def test_input_fn_takes_params_and_returns_dataset():
    fn = input_fns.get_dataset("synthetic").input_fn("eval", num_examples=5)
    ds = fn({"batch_size": 2, "context": None})
    assert isinstance(ds, tf.data.Dataset)
    assert [len(labels) for _, labels in ds.as_numpy_iterator()] == [2, 2, 1]


def test_split_option_overrides_default_split():
    source = input_fns.get_dataset("synthetic")
    ds = source.input_fn("eval", split="train", num_examples=4)({"batch_size": 4})
    _, expected = source.load("train", num_examples=4)
    assert list(next(ds.as_numpy_iterator())[1]) == list(expected)


def test_input_fn_rejects_unknown_split_when_built():
    with pytest.raises(ValueError, match="validation"):
        input_fns.get_dataset("synthetic").input_fn("eval", split="validation")
