"""Each canned estimator trains, evaluates, predicts and exports with tf.estimator 2.15's names: its metric keys,
prediction keys, export signatures and checkpoint variables (the lists below are what 2.15 gave for the same
arguments)."""

import os

import numpy as np
import pytest
import tensorflow as tf

import estimators
import estimators.export

fc = tf.feature_column
X = fc.numeric_column("x", shape=(2,))
COLOR = fc.categorical_column_with_vocabulary_list("color", ["a", "b", "c"])
BINARY_METRICS = ["accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss", "global_step",
                  "label/mean", "loss", "precision", "prediction/mean", "recall"]
MULTI_METRICS = ["accuracy", "average_loss", "global_step", "loss"]
REGRESSION_METRICS = ["average_loss", "global_step", "label/mean", "loss", "prediction/mean"]
BINARY_KEYS = ["all_class_ids", "all_classes", "class_ids", "classes", "logistic", "logits", "probabilities"]
MULTI_KEYS = ["all_class_ids", "all_classes", "class_ids", "classes", "logits", "probabilities"]
CLASSIFY_SIGNATURES = ["classification", "predict", "serving_default"]


def _input_fn(n_classes=2, regression=False, repeat=True):
    def fn():
        rng = np.random.RandomState(0)
        x = rng.rand(32, 2).astype(np.float32)
        label = np.minimum((x[:, 0] * n_classes).astype(np.int64), n_classes - 1)
        features = {"x": x, "color": np.array(["a", "b", "c", "a"] * 8)}
        ds = tf.data.Dataset.from_tensor_slices((features, x[:, :1] if regression else label)).batch(8)
        return ds.repeat() if repeat else ds
    return fn


def _serving():
    return estimators.export.build_parsing_serving_input_receiver_fn(fc.make_parse_example_spec([X, COLOR]))


CASES = {
    # name: (constructor, n_classes or 0 for a regressor, metrics, prediction keys, signatures, some variables)
    "DNNClassifier": (lambda d: estimators.DNNClassifier([4], [X, fc.indicator_column(COLOR)], model_dir=d), 2,
                      BINARY_METRICS, BINARY_KEYS, [*CLASSIFY_SIGNATURES, "regression"],
                      ["dnn/hiddenlayer_0/kernel", "dnn/logits/bias", "training/Adagrad/dnn/logits/bias/accumulator"]),
    "DNNRegressor": (lambda d: estimators.DNNRegressor([4], [X], model_dir=d), 0, REGRESSION_METRICS,
                     ["predictions"], ["predict", "regression", "serving_default"], ["dnn/logits/kernel"]),
    "DNNEstimator": (lambda d: estimators.DNNEstimator(estimators.MultiClassHead(3), [4], [X], model_dir=d), 3,
                     MULTI_METRICS, MULTI_KEYS, CLASSIFY_SIGNATURES, ["dnn/hiddenlayer_0/bias"]),
    "LinearClassifier": (lambda d: estimators.LinearClassifier([X, COLOR], model_dir=d, n_classes=3), 3,
                         MULTI_METRICS, MULTI_KEYS, CLASSIFY_SIGNATURES,
                         ["linear/linear_model/color/weights", "linear/linear_model/bias_weights",
                          "training/Ftrl/linear/linear_model/x/weights/linear"]),
    "LinearRegressor": (lambda d: estimators.LinearRegressor([X, COLOR], model_dir=d), 0, REGRESSION_METRICS,
                        ["predictions"], ["predict", "regression", "serving_default"],
                        ["linear/linear_model/x/weights"]),
    "LinearEstimator": (lambda d: estimators.LinearEstimator(estimators.BinaryClassHead(), [X], model_dir=d), 2,
                        BINARY_METRICS, BINARY_KEYS, [*CLASSIFY_SIGNATURES, "regression"],
                        ["training/Ftrl/learning_rate"]),
    "DNNLinearCombinedClassifier": (
        lambda d: estimators.DNNLinearCombinedClassifier(d, linear_feature_columns=[COLOR],
                                                         dnn_feature_columns=[X], dnn_hidden_units=[3]),
        2, BINARY_METRICS, BINARY_KEYS, [*CLASSIFY_SIGNATURES, "regression"],
        ["dnn/hiddenlayer_0/kernel", "linear/linear_model/color/weights", "training/Ftrl/iter"]),
    "DNNLinearCombinedRegressor": (
        lambda d: estimators.DNNLinearCombinedRegressor(d, linear_feature_columns=[X], dnn_feature_columns=[X],
                                                        dnn_hidden_units=[3]),
        0, REGRESSION_METRICS, ["predictions"], ["predict", "regression", "serving_default"],
        ["training/Adagrad/dnn/logits/kernel/accumulator"]),
    "DNNLinearCombinedEstimator": (
        lambda d: estimators.DNNLinearCombinedEstimator(estimators.RegressionHead(), d, linear_feature_columns=[X]),
        0, REGRESSION_METRICS, ["predictions"], ["predict", "regression", "serving_default"],
        ["linear/linear_model/bias_weights"]),
    "BaselineClassifier": (lambda d: estimators.BaselineClassifier(d), 2, BINARY_METRICS, BINARY_KEYS,
                           [*CLASSIFY_SIGNATURES, "regression"],
                           ["baseline/bias", "training/Ftrl/baseline/bias/linear"]),
    "BaselineRegressor": (lambda d: estimators.BaselineRegressor(d), 0, REGRESSION_METRICS, ["predictions"],
                          ["predict", "regression", "serving_default"], ["baseline/bias"]),
    "BaselineEstimator": (lambda d: estimators.BaselineEstimator(estimators.MultiClassHead(3), d), 3, MULTI_METRICS,
                          MULTI_KEYS, CLASSIFY_SIGNATURES, ["baseline/bias"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_trains_evaluates_predicts_and_exports_with_2_15s_names(name, tmp_path):
    make, n_classes, metrics, keys, signatures, variables = CASES[name]
    est = make(str(tmp_path / "model"))
    inputs = dict(n_classes=max(n_classes, 2), regression=n_classes == 0)
    est.train(_input_fn(**inputs), steps=3)
    assert set(variables) <= set(est.get_variable_names())
    results = est.evaluate(_input_fn(**inputs, repeat=False))
    assert sorted(results) == metrics and results["global_step"] == 3
    assert all(np.isfinite(v) for v in results.values())
    prediction = next(iter(est.predict(_input_fn(**inputs, repeat=False))))
    assert sorted(prediction) == keys
    export = est.export_saved_model(str(tmp_path / "export"), _serving())
    loaded = tf.saved_model.load(export.decode() if isinstance(export, bytes) else export)
    assert sorted(loaded.signatures) == sorted(signatures)
    assert os.path.isdir(tmp_path / "export")


def test_binary_classifier_learns_a_separable_problem(tmp_path):
    est = estimators.LinearClassifier([X], model_dir=str(tmp_path))
    est.train(_input_fn(), steps=200)
    assert est.evaluate(_input_fn(repeat=False))["accuracy"] >= 0.9


def test_string_labels_go_through_label_vocabulary_and_come_back_as_classes(tmp_path):
    def input_fn():
        return _input_fn()().map(lambda f, y: (f, tf.gather(tf.constant(["no", "yes"]), y)))
    est = estimators.DNNClassifier([3], [X], model_dir=str(tmp_path), label_vocabulary=["no", "yes"])
    est.train(input_fn, steps=2)
    prediction = next(iter(est.predict(_input_fn(repeat=False))))
    assert list(prediction["all_classes"]) == [b"no", b"yes"]
    assert prediction["classes"][0] in (b"no", b"yes")


def test_a_label_outside_the_vocabulary_stops_training(tmp_path):
    def input_fn():
        return _input_fn()().map(lambda f, y: (f, tf.gather(tf.constant(["no", "maybe"]), y)))
    est = estimators.LinearClassifier([X], model_dir=str(tmp_path), label_vocabulary=["no", "yes"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="label_vocabulary"):
        est.train(input_fn, steps=2)


def test_a_class_id_not_below_n_classes_stops_training(tmp_path):
    est = estimators.LinearClassifier([X], model_dir=str(tmp_path), n_classes=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="n_classes"):
        est.train(_input_fn(n_classes=3), steps=2)


def test_constructor_arguments_are_checked_as_2_15_did(tmp_path):
    with pytest.raises(ValueError, match="n_classes"):
        estimators.DNNClassifier([3], [X], n_classes=1)
    with pytest.raises(ValueError, match="Either linear_feature_columns or dnn_feature_columns"):
        estimators.DNNLinearCombinedClassifier(str(tmp_path))
    with pytest.raises(ValueError, match="dnn_hidden_units"):
        estimators.DNNLinearCombinedClassifier(str(tmp_path), dnn_feature_columns=[X])
    with pytest.raises(ValueError, match="Unsupported optimizer name"):
        estimators.DNNClassifier([3], [X], optimizer="Adadelta2")
    with pytest.raises(ValueError, match="loss_reduction"):
        estimators.LinearRegressor([X], loss_reduction="none")
    with pytest.raises(ValueError, match="label_vocabulary"):
        estimators.LinearClassifier([X], label_vocabulary=["a", "b", "c"])


def test_warm_start_from_a_trained_model_dir_starts_from_its_weights(tmp_path):
    first = estimators.LinearRegressor([X], model_dir=str(tmp_path / "a"))
    first.train(_input_fn(regression=True), steps=20)
    second = estimators.LinearRegressor([X], model_dir=str(tmp_path / "b"), warm_start_from=str(tmp_path / "a"))
    second.train(_input_fn(regression=True), steps=1)
    assert second.get_variable_value("global_step") == 1
    assert not np.allclose(second.get_variable_value("linear/linear_model/x/weights"), 0.0)


def test_optimizer_instances_and_callables_are_accepted(tmp_path):
    import tf_keras
    est = estimators.DNNRegressor([3], [X], model_dir=str(tmp_path / "a"),
                                  optimizer=tf_keras.optimizers.legacy.Adam(0.01))
    est.train(_input_fn(regression=True), steps=2)
    est.train(_input_fn(regression=True), steps=2)  # a fresh graph: the optimizer is rebuilt, not reused
    assert "training/Adam/dnn/logits/bias/m" in est.get_variable_names()
    est = estimators.LinearRegressor([X], model_dir=str(tmp_path / "b"),
                                     optimizer=lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1))
    est.train(_input_fn(regression=True), steps=2)
    assert est.get_variable_value("global_step") == 2


@pytest.mark.parametrize("make, expected", [
    (lambda d: estimators.DNNClassifier([3], [X], model_dir=d), {"training/Adagrad/learning_rate": 0.001}),
    (lambda d: estimators.LinearClassifier([X, COLOR], model_dir=d), {"training/Ftrl/learning_rate": 0.2}),
    (lambda d: estimators.BaselineClassifier(d), {"training/Ftrl/learning_rate": 0.3}),
    (lambda d: estimators.DNNLinearCombinedClassifier(d, linear_feature_columns=[X], dnn_feature_columns=[X],
                                                      dnn_hidden_units=[3]),
     {"training/Adagrad/learning_rate": 0.001, "training/Ftrl/learning_rate": 0.005}),
], ids=["dnn", "linear", "baseline", "combined"])
def test_default_learning_rates_are_those_2_15_saved(make, expected, tmp_path):
    est = make(str(tmp_path))
    est.train(_input_fn(), steps=1)
    for name, value in expected.items():
        assert est.get_variable_value(name) == pytest.approx(value)


def test_add_metrics_on_a_canned_estimator_adds_to_its_metrics(tmp_path):
    est = estimators.LinearClassifier([X], model_dir=str(tmp_path))
    est.train(_input_fn(), steps=2)

    def metric_fn(labels, predictions):
        return {"mean_logistic": tf.compat.v1.metrics.mean(predictions["logistic"])}
    results = estimators.add_metrics(est, metric_fn).evaluate(_input_fn(repeat=False))
    assert set(BINARY_METRICS) | {"mean_logistic"} == set(results)
    assert results["mean_logistic"] == pytest.approx(results["prediction/mean"], rel=1e-5)


def test_in_memory_evaluation_refuses_a_multi_worker_config(monkeypatch):
    from estimators.graph.in_memory_evaluator import InMemoryEvaluatorHook
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["h0:0"], "ps": ["h1:1"]}, '
                                    '"task": {"type": "chief", "index": 0}}')
    est = estimators.DNNClassifier([3], [X])
    with pytest.raises(ValueError, match="supports only single machine"):
        InMemoryEvaluatorHook(est, _input_fn())


def test_a_multi_label_dnn_trains_evaluates_and_predicts_with_2_15s_keys(tmp_path):
    def input_fn():
        x = np.random.RandomState(0).rand(32, 2).astype(np.float32)
        labels = (x > 0.5).astype(np.int64)
        return tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).batch(8)
    est = estimators.DNNEstimator(estimators.MultiLabelHead(2), [4], [X], model_dir=str(tmp_path))
    est.train(input_fn, steps=3)
    assert sorted(est.evaluate(input_fn)) == ["auc", "auc_precision_recall", "average_loss", "global_step", "loss"]
    assert sorted(next(iter(est.predict(input_fn)))) == ["classes", "logits", "probabilities"]
