"""parse_input_fn_result: an input_fn's result as graph tensors plus the hook that starts its dataset (2.15's util)."""

import pytest
import tensorflow as tf

from estimators.inputs.parse import DatasetInitializerHook, parse_input_fn_result


def test_a_dataset_becomes_tensors_and_a_hook_that_initialises_its_iterator():
    with tf.Graph().as_default():
        features, labels, hooks = parse_input_fn_result(tf.data.Dataset.from_tensor_slices(([1, 2], [3, 4])))
        assert isinstance(hooks[0], DatasetInitializerHook)
        with tf.compat.v1.train.MonitoredSession(hooks=hooks) as session:
            assert session.run([features, labels]) == [1, 3]


def test_features_alone_have_no_labels():
    with tf.Graph().as_default():
        features = tf.constant([1.0])
        assert parse_input_fn_result(features) == (features, None, [])


def test_a_tuple_of_three_is_refused_naming_the_two_allowed_forms():
    with pytest.raises(ValueError, match="input_fn should return \\(features, labels\\) as a len 2 tuple"):
        parse_input_fn_result((1, 2, 3))
