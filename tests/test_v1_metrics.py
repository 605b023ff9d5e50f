"""tf.compat.v1.metrics (value, update_op) pairs: exact over the whole eval set, equal to tf.estimator 2.15's.

The metrics (tests/fixtures/v1_metrics/metric_cases.py) see fixed logits, so 2.15's evaluate() results
(reference.json, made by make_reference.py under the real tf.estimator 2.15) are the expected values:
Estimator eval_metric_ops and TPUEstimator metric_fn, 1 and 8 replicas, a partial last batch.
"""

import importlib.util
import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "v1_metrics")
with open(os.path.join(HERE, "reference.json")) as _f:
    REFERENCE = json.load(_f)
_spec = importlib.util.spec_from_file_location("v1_metric_cases", os.path.join(HERE, "metric_cases.py"))
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
v1 = tf.compat.v1


def _logits(features):
    scale = v1.get_variable("scale", [], initializer=v1.ones_initializer())
    return features["logits"] * scale


def _loss(labels, logits):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def _train_op():
    return v1.assign_add(v1.train.get_global_step(), 1)


def estimator_model_fn(features, labels, mode):
    logits = _logits(features)
    loss = _loss(labels, logits)
    if mode == ModeKeys.TRAIN:
        return EstimatorSpec(mode, loss=loss, train_op=_train_op())
    return EstimatorSpec(mode, loss=loss, eval_metric_ops=cases.metric_ops(labels, logits, features["weight"]))


def tpu_model_fn(features, labels, mode, params):
    logits = _logits(features)
    loss = _loss(labels, logits)
    if mode == ModeKeys.TRAIN:
        return TPUEstimatorSpec(mode, loss=loss, train_op=_train_op())
    return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(cases.metric_ops, [labels, logits, features["weight"]]))


def _dataset(batch_size, repeat=False):
    data = cases.make_data()
    dataset = tf.data.Dataset.from_tensor_slices(({"logits": data["logits"], "weight": data["weight"]},
                                                  data["labels"]))
    return dataset.repeat().batch(batch_size, drop_remainder=True) if repeat else dataset.batch(batch_size)


def _estimator(tmp_path, strategy):
    config = RunConfig(model_dir=str(tmp_path), train_distribute=strategy)
    estimator = Estimator(estimator_model_fn, config=config)
    estimator.train(lambda: _dataset(cases.BATCH_SIZE, repeat=True), steps=1)
    return estimator


def _tpu_estimator(tmp_path, strategy):
    config = RunConfig(model_dir=str(tmp_path), train_distribute=strategy,
                       tpu_config=TPUConfig(iterations_per_loop=2))
    estimator = TPUEstimator(tpu_model_fn, config=config, use_tpu=False, train_batch_size=16, eval_batch_size=16)
    estimator.train(lambda params: _dataset(params["batch_size"], repeat=True), steps=1)
    return estimator


def _assert_matches_reference(results, reference):
    # 2.15's "loss" is the mean of the batches' mean losses (a partial batch counts as much as a full
    # one); the engine reports the exact mean over examples. Metrics only here.
    reference = {k: v for k, v in reference.items() if k != "loss"}
    assert sorted(set(results) - {"loss"}) == sorted(reference)
    for name, expected in reference.items():
        np.testing.assert_allclose(results[name], expected, rtol=2e-6, atol=1e-7, err_msg=name)


@pytest.fixture(scope="module")
def estimator_evaluated_on_one_replica(tmp_path_factory):
    """An Estimator trained one step and evaluated once on one replica: (estimator, its results)."""
    estimator = _estimator(tmp_path_factory.mktemp("estimator_one_replica"), None)
    return estimator, estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))


@pytest.mark.parametrize("replicas", [1, 8])
def test_estimator_eval_metric_ops_equal_tf_estimator_2_15(tmp_path, replicas, request):
    if replicas == 1:
        _, results = request.getfixturevalue("estimator_evaluated_on_one_replica")
    else:
        estimator = _estimator(tmp_path, request.getfixturevalue("eight_replicas"))
        results = estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))
    _assert_matches_reference(results, REFERENCE["estimator"])


@pytest.mark.parametrize("replicas", [1, 8])
def test_tpu_estimator_metric_fn_pairs_equal_tf_estimator_2_15(tmp_path, replicas, request):
    strategy = request.getfixturevalue("eight_replicas") if replicas == 8 else None
    estimator = _tpu_estimator(tmp_path, strategy)
    results = estimator.evaluate(lambda params: _dataset(params["batch_size"]))
    _assert_matches_reference(results, REFERENCE["tpu_estimator"])


def test_metric_variables_have_tf_estimator_2_15_names(estimator_evaluated_on_one_replica):
    estimator, _ = estimator_evaluated_on_one_replica
    (runtime,) = estimator._runtimes.values()
    assert [s.name for s in runtime.store.tf1_local_variables()] == REFERENCE["metric_variables"]


def _numpy_metrics(count=None):
    data = cases.make_data()
    logits, labels = data["logits"][:count], data["labels"][:count]
    top2 = np.argsort(-logits, axis=1)[:, :2]
    return {"accuracy": np.mean(logits.argmax(1) == labels),
            "in_top_2": np.mean([label in row for label, row in zip(labels, top2, strict=True)])}


def mixed_model_fn(features, labels, mode):
    """Keras metric objects and v1 pairs side by side in one eval_metric_ops."""
    logits = _logits(features)
    loss = _loss(labels, logits)
    if mode == ModeKeys.TRAIN:
        return EstimatorSpec(mode, loss=loss, train_op=_train_op())
    keras_accuracy = keras.metrics.SparseCategoricalAccuracy()
    keras_accuracy.update_state(labels, logits)
    in_top_2 = tf.cast(v1.nn.in_top_k(logits, labels, 2), tf.float32)
    return EstimatorSpec(mode, loss=loss, eval_metric_ops={
        "keras_accuracy": keras_accuracy,
        "accuracy": v1.metrics.accuracy(labels, tf.argmax(logits, 1)),
        "in_top_2": v1.metrics.mean(in_top_2),
    })


def test_mixed_keras_and_v1_metrics_are_exact_with_8_replicas_and_a_partial_batch(tmp_path, eight_replicas):
    estimator = Estimator(mixed_model_fn, config=RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas))
    estimator.train(lambda: _dataset(cases.BATCH_SIZE, repeat=True), steps=1)
    results = estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))
    expected = _numpy_metrics()
    assert results["accuracy"] == pytest.approx(expected["accuracy"])
    assert results["keras_accuracy"] == pytest.approx(expected["accuracy"])
    assert results["in_top_2"] == pytest.approx(expected["in_top_2"])
    assert all(isinstance(results[k], float) for k in ("accuracy", "keras_accuracy", "in_top_2"))


def test_v1_metrics_start_afresh_at_every_evaluate_and_cover_only_the_batches_read(tmp_path):
    estimator = Estimator(mixed_model_fn, config=RunConfig(model_dir=str(tmp_path)))
    estimator.train(lambda: _dataset(cases.BATCH_SIZE, repeat=True), steps=1)
    full = estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))
    two_batches = estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE), steps=2)
    again = estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))
    assert two_batches["accuracy"] == pytest.approx(_numpy_metrics(2 * cases.BATCH_SIZE)["accuracy"])
    assert two_batches["in_top_2"] == pytest.approx(_numpy_metrics(2 * cases.BATCH_SIZE)["in_top_2"])
    assert again == full


def test_v1_metrics_in_metric_fn_mix_with_keras_metrics(tmp_path):
    def model_fn(features, labels, mode, params):
        logits = _logits(features)
        loss = _loss(labels, logits)
        if mode == ModeKeys.TRAIN:
            return TPUEstimatorSpec(mode, loss=loss, train_op=_train_op())

        def metric_fn(labels, logits):
            keras_accuracy = keras.metrics.SparseCategoricalAccuracy()
            keras_accuracy.update_state(labels, logits)
            return {"keras_accuracy": keras_accuracy, "accuracy": v1.metrics.accuracy(labels, tf.argmax(logits, 1))}

        return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))

    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(iterations_per_loop=2))
    estimator = TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=16, eval_batch_size=16)
    estimator.train(lambda params: _dataset(params["batch_size"], repeat=True), steps=1)
    results = estimator.evaluate(lambda params: _dataset(params["batch_size"]))
    again = estimator.evaluate(lambda params: _dataset(params["batch_size"]))
    assert results["accuracy"] == results["keras_accuracy"] == pytest.approx(_numpy_metrics()["accuracy"])
    assert again == results


def test_v1_metric_in_train_mode_does_not_disturb_training(tmp_path):
    def model_fn(features, labels, mode):
        logits = _logits(features)
        loss = _loss(labels, logits)
        accuracy = v1.metrics.accuracy(labels, tf.argmax(logits, 1))
        if mode == ModeKeys.TRAIN:
            with tf.control_dependencies([accuracy[1]]):
                return EstimatorSpec(mode, loss=loss, train_op=_train_op())
        return EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})

    estimator = Estimator(model_fn, config=RunConfig(model_dir=str(tmp_path)))
    estimator.train(lambda: _dataset(cases.BATCH_SIZE, repeat=True), steps=3)
    assert estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))["accuracy"] == pytest.approx(
        _numpy_metrics()["accuracy"])


@pytest.mark.parametrize("ops, message", [
    ({"accuracy": "not a metric"}, "accuracy"),
    ({"loss": None}, "key: loss"),  # 2.15 refused a non-pair value when the spec was built, before the name
])
def test_bad_eval_metric_ops_are_one_clear_error(tmp_path, ops, message):
    def model_fn(features, labels, mode):
        logits = _logits(features)
        loss = _loss(labels, logits)
        if mode == ModeKeys.TRAIN:
            return EstimatorSpec(mode, loss=loss, train_op=_train_op())
        return EstimatorSpec(mode, loss=loss, eval_metric_ops=ops)

    estimator = Estimator(model_fn, config=RunConfig(model_dir=str(tmp_path)))
    estimator.train(lambda: _dataset(cases.BATCH_SIZE, repeat=True), steps=1)
    with pytest.raises(TypeError, match=message):  # EstimatorSpec's check, with 2.15's exception class
        estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))


def test_a_metric_named_loss_is_refused_the_engine_reports_the_mean_loss(tmp_path):
    def model_fn(features, labels, mode):
        loss = _loss(labels, _logits(features))
        if mode == ModeKeys.TRAIN:
            return EstimatorSpec(mode, loss=loss, train_op=_train_op())
        return EstimatorSpec(mode, loss=loss, eval_metric_ops={"loss": tf.compat.v1.metrics.mean(loss)})

    estimator = Estimator(model_fn, config=RunConfig(model_dir=str(tmp_path)))
    estimator.train(lambda: _dataset(cases.BATCH_SIZE, repeat=True), steps=1)
    with pytest.raises(ValueError, match="already reports the mean loss"):
        estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))


def test_a_list_instead_of_a_value_update_tuple_is_refused_as_in_tf_estimator(tmp_path):
    def model_fn(features, labels, mode):
        logits = _logits(features)
        loss = _loss(labels, logits)
        if mode == ModeKeys.TRAIN:
            return EstimatorSpec(mode, loss=loss, train_op=_train_op())
        pair = v1.metrics.accuracy(labels, tf.argmax(logits, 1))
        return EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": list(pair)})

    estimator = Estimator(model_fn, config=RunConfig(model_dir=str(tmp_path)))
    estimator.train(lambda: _dataset(cases.BATCH_SIZE, repeat=True), steps=1)
    with pytest.raises(ValueError, match=r"eval_metric_ops\['accuracy'\] is a list"):
        estimator.evaluate(lambda: _dataset(cases.BATCH_SIZE))
