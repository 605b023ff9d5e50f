"""An export output as a list of its tensors, and rebuilt from such a list (2.15's TPU export helpers)."""

import pytest
import tensorflow as tf

from estimators.export import ClassificationOutput, PredictOutput, RegressionOutput
from estimators.export.output_tensors import clone_export_output_with_tensors, export_output_to_tensors


def test_classification_lists_scores_then_classes_with_none_for_a_missing_one():
    classes = tf.constant(["a"])
    assert export_output_to_tensors(ClassificationOutput(classes=classes)) == [None, classes]


def test_regression_round_trips_through_a_new_tensor():
    new_value = tf.constant([2.0])
    clone = clone_export_output_with_tensors(RegressionOutput(tf.constant([1.0])), [new_value])
    assert isinstance(clone, RegressionOutput) and clone.value is new_value


def test_predict_keeps_its_keys_in_order():
    output = PredictOutput({"a": tf.constant([1.0]), "b": tf.constant([2.0])})
    new = [tf.constant([3.0]), tf.constant([4.0])]
    clone = clone_export_output_with_tensors(output, new)
    assert list(clone.outputs) == ["a", "b"] and clone.outputs["b"] is new[1]


def test_a_wrong_number_of_tensors_is_refused():
    with pytest.raises(ValueError, match="length 2"):
        clone_export_output_with_tensors(ClassificationOutput(scores=tf.constant([[0.5]])), [None])


def test_other_objects_are_refused():
    with pytest.raises(ValueError, match="ClassificationOutput"):
        export_output_to_tensors({"not": "an output"})
