"""estimators.add_metrics: a copy of an estimator whose evaluate() adds a metric_fn's metrics (tf.estimator's)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from estimators.extenders import add_metrics

v1 = tf.compat.v1
ROWS = 37
X = np.random.RandomState(3).normal(size=(ROWS, 3)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)


def _logits(features):
    w = v1.get_variable("w", [3, 2], initializer=v1.constant_initializer([[1.0, -1.0], [0.5, 0.0], [0.0, 0.2]]))
    return tf.matmul(features["x"], w)


def model_fn(features, labels, mode, params):
    logits = _logits(features)
    predictions = {"classes": tf.argmax(logits, 1), "logits": logits}
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    if mode == ModeKeys.TRAIN:
        return EstimatorSpec(mode, loss=loss, train_op=v1.train.GradientDescentOptimizer(params["lr"]).minimize(loss))
    return EstimatorSpec(mode, loss=loss, predictions=predictions,
                         eval_metric_ops={"accuracy": v1.metrics.accuracy(labels, predictions["classes"])})


def tpu_model_fn(features, labels, mode, params):
    logits = _logits(features)
    predictions = {"classes": tf.argmax(logits, 1), "logits": logits}
    if mode == ModeKeys.PREDICT:  # labels are None there, as in 2.15
        return TPUEstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    if mode == ModeKeys.TRAIN:
        return TPUEstimatorSpec(mode, loss=loss,
                                train_op=v1.train.GradientDescentOptimizer(params["lr"]).minimize(loss))

    def metric_fn(labels, logits):
        return {"accuracy": v1.metrics.accuracy(labels, tf.argmax(logits, 1))}

    return TPUEstimatorSpec(mode, loss=loss, predictions=predictions, eval_metrics=(metric_fn, [labels, logits]))


def _input(batch_size, repeat=False):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
    return dataset.repeat().batch(batch_size, drop_remainder=True) if repeat else dataset.batch(batch_size)


def added_metrics(features, labels, predictions, config):
    assert config.model_dir
    positive = keras.metrics.Mean()
    positive.update_state(tf.cast(tf.equal(predictions["classes"], 1), tf.float32))
    return {"positive_rate": positive,
            "mean_x0": v1.metrics.mean(features["x"][:, 0]),
            "accuracy": v1.metrics.accuracy(labels, tf.zeros_like(labels))}  # replaces model_fn's


def _expected(estimator_like_logits):
    classes = estimator_like_logits.argmax(1)
    return {"positive_rate": np.mean(classes == 1), "mean_x0": X[:, 0].mean(), "accuracy": np.mean(Y == 0)}


def _check(results, logits):
    for name, value in _expected(logits).items():
        assert results[name] == pytest.approx(value, rel=1e-6), name


def test_add_metrics_to_an_estimator_adds_and_replaces_metrics(tmp_path):
    estimator = Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    estimator.train(lambda: _input(8, repeat=True), steps=2)
    extended = add_metrics(estimator, added_metrics)
    assert type(extended) is Estimator and extended.model_dir == estimator.model_dir
    assert extended.params == estimator.params
    results = extended.evaluate(lambda: _input(8))
    logits = np.stack([p["logits"] for p in estimator.predict(lambda: _input(8))])
    _check(results, logits)
    assert estimator.evaluate(lambda: _input(8))["accuracy"] == pytest.approx(np.mean(logits.argmax(1) == Y))


def test_add_metrics_to_a_tpu_estimator_runs_on_the_real_rows_with_8_replicas(tmp_path, eight_replicas):
    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas,
                       tpu_config=TPUConfig(iterations_per_loop=3))
    estimator = TPUEstimator(tpu_model_fn, config=config, params={"lr": 0.1}, use_tpu=False,
                             train_batch_size=16, eval_batch_size=16, predict_batch_size=16)
    estimator.train(lambda params: _input(params["batch_size"], repeat=True), steps=2)
    extended = add_metrics(estimator, added_metrics)
    assert type(extended) is TPUEstimator
    results = extended.evaluate(lambda params: _input(params["batch_size"]))
    logits = np.stack([p["logits"] for p in extended.predict(lambda params: _input(params["batch_size"]))])
    _check(results, logits)


def test_add_metrics_refuses_a_metric_fn_with_other_arguments():
    estimator = Estimator(model_fn, params={"lr": 0.1})
    with pytest.raises(ValueError, match=r"\['mode'\]"):
        add_metrics(estimator, lambda labels, mode: {})
