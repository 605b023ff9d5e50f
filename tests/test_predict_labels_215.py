"""predict() calls model_fn with labels None, whatever input_fn returns, as tf.estimator 2.15 did.

A model_fn that uses labels when it gets them (teacher forcing) predicted from the labels of a reused
evaluation input_fn before: silently other numbers. The 2.15 reference (TF 2.15.1 + tensorflow-estimator
2.15.0, Estimator and TPUEstimator(use_tpu=False)) printed predictions [2.0, 4.0] and labels None in PREDICT.
On the graph path, input_fn's Python lists reach model_fn unchanged, as 2.15 passed them.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimators

REFERENCE_215 = [2.0, 4.0]  # w=2 times x; labels [10, 20] would have given [12, 24]


def _input_fn(params=None):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[10.0], [20.0]]))
    return dataset.batch(params["batch_size"] if params else 2, drop_remainder=True)


def _model_fn(seen, spec_class, scaffold):
    def model_fn(features, labels, mode):
        seen[mode] = labels
        w = tf.compat.v1.get_variable("w", initializer=2.0)
        out = features["x"] * w
        if labels is not None:  # teacher forcing when labels are given
            out = out + labels
        train_op = tf.compat.v1.train.get_global_step().assign_add(1)
        extra = {"scaffold": tf.compat.v1.train.Scaffold()} if scaffold else {}
        return spec_class(mode, predictions={"y": out}, loss=tf.reduce_mean(out), train_op=train_op, **extra)

    return model_fn


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_estimator_predict_passes_no_labels(tmp_path, execution):
    seen = {}
    estimator = estimators.Estimator(_model_fn(seen, estimators.EstimatorSpec, execution == "graph"),
                                     config=estimators.RunConfig(model_dir=str(tmp_path), execution=execution))
    estimator.train(_input_fn, steps=1)
    predicted = [float(p["y"][0]) for p in estimator.predict(_input_fn)]
    assert seen[estimators.ModeKeys.PREDICT] is None and seen[estimators.ModeKeys.TRAIN] is not None
    np.testing.assert_allclose(predicted, REFERENCE_215)


def test_tpu_estimator_off_the_tpu_predicts_without_labels(tmp_path):
    seen = {}
    estimator = estimators.tpu.TPUEstimator(
        model_fn=_model_fn(seen, estimators.tpu.TPUEstimatorSpec, scaffold=False), use_tpu=False,
        train_batch_size=2, predict_batch_size=2, config=estimators.tpu.RunConfig(model_dir=str(tmp_path)))
    estimator.train(_input_fn, steps=1)
    predicted = [float(p["y"][0]) for p in estimator.predict(_input_fn)]
    assert seen[estimators.ModeKeys.PREDICT] is None
    np.testing.assert_allclose(predicted, REFERENCE_215)


def test_graph_path_hands_model_fn_python_lists_unchanged(tmp_path):
    given = ({"x": [[1.0], [2.0]]}, [[10.0], [20.0]])
    seen = {}

    def model_fn(features, labels, mode):
        seen[mode] = (features, labels)
        step = tf.compat.v1.train.get_global_step().assign_add(1)
        return estimators.EstimatorSpec(mode, loss=tf.constant(0.0), train_op=step, predictions=tf.constant([[0.0]]))

    estimator = estimators.Estimator(model_fn, config=estimators.RunConfig(model_dir=str(tmp_path), execution="graph"))
    estimator.train(lambda: given, steps=1)
    assert seen[estimators.ModeKeys.TRAIN] == given
