"""The DNN and DNN-linear-combined estimators give tf.estimator 2.15's numbers: every trained variable (optimizer
slots, batch-norm moving statistics), the layers' fraction_of_zero_values summaries, evaluation and predictions of
small fixed programs warm-started from fixed weights; and 2.15's V2 builders refuse what 2.15 refused.

The programs are tests/reference/make_canned_dnn_215.py's; its output under the real 2.15 (tensorflow-cpu 2.15.1,
tensorflow-estimator 2.15.0) is tests/reference/canned_dnn_215.json.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import estimators
from estimators.canned import dnn, dnn_linear_combined
from estimators.mode_keys import ModeKeys

REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
with open(os.path.join(REFERENCE_DIR, "canned_dnn_215.json")) as _f:
    REFERENCE = json.load(_f)
_spec = importlib.util.spec_from_file_location("make_canned_dnn_215",
                                               os.path.join(REFERENCE_DIR, "make_canned_dnn_215.py"))
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)

RTOL, ATOL = 1e-5, 1e-6
NAMES = sorted(programs.PROGRAMS)


@functools.cache
def ours(name: str) -> dict:
    return programs.PROGRAMS[name](estimators)


def _close(actual, expected, what: str) -> None:
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol=RTOL,
                               atol=ATOL, err_msg=what)


def _assert_part(name: str, part: str) -> None:
    expected, actual = REFERENCE["programs"][name][part], ours(name)[part]
    assert sorted(actual) == sorted(expected), f"{name} {part}: keys differ"
    for key, value in expected.items():
        if isinstance(value, dict):
            assert sorted(actual[key]) == sorted(value), f"{name} {part}[{key}]: steps differ"
            _close([actual[key][s] for s in sorted(value)], [value[s] for s in sorted(value)], f"{part}[{key}]")
        else:
            _close(actual[key], value, f"{name} {part}[{key}]")


@pytest.mark.parametrize("name", NAMES)
def test_trained_variables_and_slots_are_215s(name):
    _assert_part(name, "variables")


@pytest.mark.parametrize("name", NAMES)
def test_fraction_of_zero_values_summaries_are_215s(name):
    _assert_part(name, "summaries")


@pytest.mark.parametrize("name", NAMES)
def test_evaluation_is_215s(name):
    _assert_part(name, "evaluate")


@pytest.mark.parametrize("name", NAMES)
def test_prediction_is_215s(name):
    _assert_part(name, "predict")


def _tf1_numeric_column(key: str):
    from tensorflow.python.feature_column import feature_column as fc_v1  # a TF1-only column kind

    return fc_v1._numeric_column(key)


def test_a_tf1_feature_column_in_the_dnn_is_215s_value_error_at_train():
    est = estimators.DNNRegressor([2], [_tf1_numeric_column("age")])
    with pytest.raises(ValueError, match="Received a feature column from TensorFlow v1"):
        est.train(programs._input_fn(regression=True), steps=1)


def test_a_tf1_feature_column_on_the_combined_dnn_side_is_215s_value_error_at_train():
    est = estimators.DNNLinearCombinedRegressor(linear_feature_columns=[tf.feature_column.numeric_column("age")],
                                                dnn_feature_columns=[_tf1_numeric_column("age")],
                                                dnn_hidden_units=[2])
    with pytest.raises(ValueError, match="Received a feature column from TensorFlow v1"):
        est.train(programs._input_fn(regression=True), steps=1)


def test_logit_fn_builder_takes_only_an_int_number_of_units():
    with pytest.raises(ValueError, match="units must be an int"):
        dnn.dnn_logit_fn_builder_v2(2.0, [2], [tf.feature_column.numeric_column("age")], tf.nn.relu, None, False)


def test_logit_fn_names_its_variables_as_215():
    with tf.Graph().as_default():
        logit_fn = dnn.dnn_logit_fn_builder_v2(3, [2], [tf.feature_column.numeric_column("age")], tf.nn.relu,
                                               None, True)
        logits = logit_fn(features={"age": tf.constant([[1.0], [2.0]])}, mode=ModeKeys.EVAL)
        names = sorted(v.name for v in tf.compat.v1.global_variables())
    assert logits.shape.as_list() == [2, 3]
    assert names == ["dnn/hiddenlayer_0/batchnorm_0/beta:0", "dnn/hiddenlayer_0/batchnorm_0/gamma:0",
                     "dnn/hiddenlayer_0/batchnorm_0/moving_mean:0", "dnn/hiddenlayer_0/batchnorm_0/moving_variance:0",
                     "dnn/hiddenlayer_0/bias:0", "dnn/hiddenlayer_0/kernel:0", "dnn/logits/bias:0",
                     "dnn/logits/kernel:0"]


def test_model_fns_refuse_features_that_are_not_a_dict():
    column = tf.feature_column.numeric_column("age")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="features should be a dict"):
            dnn.dnn_model_fn_v2(tf.constant([[1.0]]), None, ModeKeys.PREDICT, estimators.RegressionHead(), [2],
                                [column])
        with pytest.raises(ValueError, match="features should be a dict"):
            dnn_linear_combined._dnn_linear_combined_model_fn_v2(
                tf.constant([[1.0]]), None, ModeKeys.PREDICT, estimators.RegressionHead(),
                dnn_feature_columns=[column], dnn_hidden_units=[2])


def test_combined_model_fn_needs_hidden_units_for_dnn_columns():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        dnn_linear_combined._dnn_linear_combined_model_fn_v2(
            {"age": tf.constant([[1.0]])}, None, ModeKeys.PREDICT, estimators.RegressionHead(),
            dnn_feature_columns=[tf.feature_column.numeric_column("age")])


def test_combined_model_fn_refuses_a_tf1_optimizer():
    column = tf.feature_column.numeric_column("age")
    with tf.Graph().as_default(), pytest.raises(ValueError, match="not a tf.keras.optimizers.Optimizer"):
        dnn_linear_combined._dnn_linear_combined_model_fn_v2(
            {"age": tf.constant([[1.0]])}, tf.constant([[1.0]]), ModeKeys.TRAIN, estimators.RegressionHead(),
            dnn_feature_columns=[column], dnn_hidden_units=[2],
            dnn_optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.1))


def test_no_hidden_units_is_the_logits_layer_alone_as_in_215(tmp_path):
    est = estimators.DNNClassifier([], [tf.feature_column.numeric_column("age")], model_dir=str(tmp_path))
    est.train(programs._input_fn(labels=(0, 1, 1, 0)), steps=1)
    assert est.get_variable_names() == [
        "dnn/logits/bias", "dnn/logits/kernel", "global_step", "training/Adagrad/decay",
        "training/Adagrad/dnn/logits/bias/accumulator", "training/Adagrad/dnn/logits/kernel/accumulator",
        "training/Adagrad/learning_rate"]


def test_warm_start_remaps_embedding_rows_by_vocabulary_as_215(tmp_path):
    """2.15's VocabInfo remapping: a kept word keeps its row, a moved one moves, a new one gets the backup."""
    fc = tf.feature_column
    old_vocab, new_vocab = tmp_path / "old_vocab", tmp_path / "new_vocab"
    old_vocab.write_text("doctor\nlawyer\nconsultant")
    new_vocab.write_text("doctor\nconsultant\nengineer")

    def column(path):
        return fc.embedding_column(fc.categorical_column_with_vocabulary_file("occupation", str(path), 3), 2)

    def input_fn():
        return {"occupation": [["doctor"], ["consultant"]]}, [0, 1]

    first = estimators.DNNClassifier([4], [column(old_vocab)], model_dir=str(tmp_path / "a"), optimizer="SGD")
    first.train(input_fn, max_steps=1)
    name = "dnn/input_from_feature_columns/input_layer/occupation_embedding/embedding_weights"
    vocab_info = estimators.VocabInfo(new_vocab=str(new_vocab), new_vocab_size=3, num_oov_buckets=0,
                                      old_vocab=str(old_vocab), old_vocab_size=3,
                                      backup_initializer=tf.compat.v1.initializers.random_uniform(0.39, 0.39))
    import tf_keras

    second = estimators.DNNClassifier(
        [4], [column(new_vocab)], model_dir=str(tmp_path / "b"), optimizer=tf_keras.optimizers.legacy.SGD(0.0),
        warm_start_from=estimators.WarmStartSettings(first.model_dir, vars_to_warm_start=None,
                                                     var_name_to_vocab_info={name: vocab_info}))
    second.train(input_fn, max_steps=1)
    old, new = first.get_variable_value(name), second.get_variable_value(name)
    np.testing.assert_allclose(new, [old[0], old[2], [0.39, 0.39]], rtol=1e-6)


def test_a_tpu_spec_becomes_215s_estimator_spec_off_the_tpu():
    """TPUEstimatorSpec.as_estimator_spec (2.15's model_fn._TPUEstimatorSpec too): metric_fn's dict as metrics."""
    from estimators.specs import spec as specs

    def metric_fn(labels, predictions):
        return {"mse": tf.compat.v1.metrics.mean_squared_error(labels, predictions)}

    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        tensors = {"labels": tf.constant([1.0]), "predictions": tf.constant([0.5])}
        spec = specs._TPUEstimatorSpec(mode=ModeKeys.EVAL, loss=loss,
                                       eval_metrics=(metric_fn, tensors)).as_estimator_spec()
    assert isinstance(spec, estimators.EstimatorSpec)
    assert spec.loss is loss and sorted(spec.eval_metric_ops) == ["mse"]
