"""Estimator contracts tf.estimator 2.15 kept that its own estimator_test checks, each as it behaved there."""

import inspect
import os

import numpy as np
import pytest
import tensorflow as tf

from estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig


def _tensors_input_fn():
    return {"x": tf.constant([[1.0], [1.0]])}, tf.constant([[1.0], [1.0]])


def _spec(mode, **kwargs):
    step = tf.compat.v1.train.get_global_step()
    return EstimatorSpec(mode, loss=tf.constant(0.0), train_op=tf.compat.v1.assign_add(step, 1), **kwargs)


def test_a_fresh_train_on_the_tf2_path_publishes_trained_checkpoints_only(tmp_path):
    """2.15 also saved the starting state (model.ckpt-0); the TF2 path does not, so a call that fails in its
    first step leaves model_dir as it was (the graph path, TF1's own hooks, saves it as 2.15 did)."""
    Estimator(lambda features, labels, mode: _spec(mode), model_dir=str(tmp_path)).train(_tensors_input_fn, steps=5)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == ["model.ckpt-5"]


def test_predict_keys_select_predictions_that_agree_on_their_own_batch_length(tmp_path):
    def model_fn(features, labels, mode):
        return _spec(mode, predictions={"y1": tf.constant([[10.0]]), "y2": tf.constant([[12.0]])})

    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(_tensors_input_fn, steps=1)
    first = next(estimator.predict(_tensors_input_fn, predict_keys=["y1"]))
    assert list(first) == ["y1"] and first["y1"] == pytest.approx([10.0])


def test_a_single_prediction_tensor_of_its_own_batch_length_yields_its_own_rows(tmp_path):
    """2.15 took the batch length from the predictions: [[4.]] for a two-row input batch is one example, [4.]."""
    def model_fn(features, labels, mode):
        x = tf.Variable([[3.0]], name="x")
        return EstimatorSpec(mode, predictions=tf.math.add(x, 1.0))

    predictions = list(Estimator(model_fn, model_dir=str(tmp_path)).predict(
        lambda: tf.data.Dataset.from_tensors(({"x": tf.constant([[1.0], [1.0]])}, tf.constant([[1.0], [1.0]])))))
    assert len(predictions) == 1 and predictions[0] == pytest.approx([4.0])


def test_predict_keys_with_a_single_prediction_tensor_is_an_error(tmp_path):
    estimator = Estimator(lambda features, labels, mode: _spec(mode, predictions=tf.constant([[10.0]])),
                          model_dir=str(tmp_path))
    estimator.train(_tensors_input_fn, steps=1)
    with pytest.raises(ValueError, match="predict_keys argument is not valid in case of non-dict predictions"):
        next(estimator.predict(_tensors_input_fn, predict_keys=["y"]))


def test_a_v1_metric_value_may_be_a_nested_structure(tmp_path):
    def model_fn(features, labels, mode):
        value = ((tf.constant(2.0), tf.constant(1)), tf.constant(3.0, tf.float64))
        return _spec(mode, eval_metric_ops={"nested": (value, tf.no_op())})

    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(_tensors_input_fn, steps=1)
    (two, one), three = estimator.evaluate(_tensors_input_fn, steps=1)["nested"]
    assert (two, one, three) == (2.0, 1, 3.0)


def test_a_metric_named_global_step_is_refused(tmp_path):
    def model_fn(features, labels, mode):
        return _spec(mode, eval_metric_ops={"global_step": tf.compat.v1.metrics.mean(tf.constant(1.0))})

    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(_tensors_input_fn, steps=1)
    with pytest.raises(ValueError, match="Metric with name `global_step` is not allowed"):
        estimator.evaluate(_tensors_input_fn, steps=1)


def test_a_subclass_may_not_replace_the_estimators_methods():
    class Replacing(Estimator):
        def __init__(self):
            super().__init__(model_fn=lambda features, labels, mode: _spec(mode))

        def predict(self, input_fn, predict_keys=None, hooks=None):
            return iter(())

    with pytest.raises(ValueError, match=r"cannot override members of Estimator.*'predict'"):
        Replacing()


def test_a_subclass_may_add_methods_of_its_own():
    class Extending(Estimator):
        def __init__(self):
            super().__init__(model_fn=lambda features, labels, mode: _spec(mode))

        def predict_proba(self, input_fn):
            return self.predict(input_fn)

    Extending()


def test_the_model_fn_property_takes_features_labels_mode_config_with_params_bound(tmp_path):
    seen = {}

    def model_fn(features, labels, mode, params):
        seen["params"] = params
        return _spec(mode)

    estimator = Estimator(model_fn, model_dir=str(tmp_path), params={"units": 3})
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        spec = estimator.model_fn({"x": tf.constant([[1.0]])}, None, ModeKeys.TRAIN, estimator.config)
    assert isinstance(spec, EstimatorSpec) and seen["params"] == {"units": 3}
    assert list(inspect.signature(estimator.model_fn).parameters) == ["features", "labels", "mode", "config"]


def test_train_on_an_evaluator_task_points_to_train_and_evaluate(tmp_path):
    class EvaluatorConfig(RunConfig):
        @property
        def task_type(self):
            return "evaluator"

    estimator = Estimator(lambda features, labels, mode: _spec(mode), model_dir=str(tmp_path),
                          config=EvaluatorConfig())
    with pytest.raises(ValueError, match="train_and_evaluate"):
        estimator.train(_tensors_input_fn, steps=1)


def test_an_input_fn_that_only_a_graph_runs_trains_on_the_graph_path(tmp_path):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": np.ones([4, 1], np.float32)}, np.ones([4, 1]))).repeat()
        return tf.compat.v1.data.make_initializable_iterator(dataset).get_next()

    estimator = Estimator(lambda features, labels, mode: _spec(mode), model_dir=str(tmp_path))
    estimator.train(input_fn, steps=4)
    assert estimator.get_variable_value("global_step") == 4


def test_python_numbers_from_input_fn_become_features(tmp_path):
    seen = {}

    def model_fn(features):
        seen["keys"] = sorted(features)
        return _spec(ModeKeys.TRAIN)

    Estimator(model_fn, model_dir=str(tmp_path)).train(lambda: {"x": 4, "y": 5}, steps=1)
    assert seen["keys"] == ["x", "y"]


def test_an_input_fn_tuple_of_three_is_refused_with_the_len_2_rule(tmp_path):
    estimator = Estimator(lambda features: _spec(ModeKeys.TRAIN), model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="len 2 tuple"):
        estimator.train(lambda: (4, 5, 6), steps=1)


def test_a_spec_without_a_mode_runs_as_the_calls_mode(tmp_path):
    def model_fn(features):
        return _spec(None)

    estimator = Estimator(model_fn, model_dir=str(tmp_path)).train(lambda: {"x": 4}, steps=2)
    assert estimator.get_variable_value("global_step") == 2
