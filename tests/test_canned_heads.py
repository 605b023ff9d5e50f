"""Heads compute 2.15's training loss (SUM_OVER_BATCH_SIZE by default, SUM on request, weighted), predictions
and metrics, in a TF1 graph as the canned estimators use them."""

import numpy as np
import pytest
import tensorflow as tf

import estimators
from estimators.mode_keys import ModeKeys


def _run(fetches):
    with tf.compat.v1.Session() as session:
        session.run([tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer(),
                     tf.compat.v1.tables_initializer()])
        return session.run(fetches)


def _loss(head, logits, labels, features=None):
    with tf.Graph().as_default():
        return _run(head.loss(labels=np.array(labels), logits=np.array(logits, np.float32), features=features or {}))


def _eval(head, logits, labels, features=None):
    with tf.Graph().as_default():
        spec = head.create_estimator_spec(features or {}, ModeKeys.EVAL, np.array(logits, np.float32),
                                          np.array(labels))
        updates = {k: u for k, (_, u) in spec.eval_metric_ops.items()}
        values = {k: v for k, (v, _) in spec.eval_metric_ops.items()}
        with tf.compat.v1.Session() as session:
            session.run([tf.compat.v1.local_variables_initializer(), tf.compat.v1.tables_initializer()])
            session.run(updates)
            return session.run(values)


def test_regression_loss_is_the_mean_squared_error_by_default():
    assert _loss(estimators.RegressionHead(), [[1.0], [3.0]], [[0.0], [0.0]]) == pytest.approx(5.0)


def test_sum_reduction_adds_the_per_example_losses():
    head = estimators.RegressionHead(loss_reduction="sum")
    assert _loss(head, [[1.0], [3.0]], [[0.0], [0.0]]) == pytest.approx(10.0)


def test_weighted_loss_divides_by_the_batch_size_not_the_weights():
    head = estimators.RegressionHead(weight_column="w")
    loss = _loss(head, [[1.0], [3.0]], [[0.0], [0.0]], {"w": np.array([2.0, 0.0], np.float32)})
    assert loss == pytest.approx((2.0 * 1.0) / 2)


def test_weighted_average_loss_metric_divides_by_the_weights():
    head = estimators.RegressionHead(weight_column="w")
    metrics = _eval(head, [[1.0], [3.0]], [[0.0], [0.0]], {"w": np.array([2.0, 0.0], np.float32)})
    assert metrics["average_loss"] == pytest.approx(1.0)


def test_binary_head_loss_is_sigmoid_cross_entropy():
    loss = _loss(estimators.BinaryClassHead(), [[0.0], [2.0]], [[1], [0]])
    assert loss == pytest.approx((np.log(2.0) + np.log1p(np.exp(2.0))) / 2, rel=1e-6)


def test_binary_head_metrics_are_2_15s():
    metrics = _eval(estimators.BinaryClassHead(), [[-1.0], [2.0], [3.0], [-2.0]], [[0], [1], [0], [0]])
    assert sorted(metrics) == ["accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss",
                               "label/mean", "precision", "prediction/mean", "recall"]
    assert metrics["accuracy"] == pytest.approx(0.75)
    assert metrics["label/mean"] == pytest.approx(0.25)
    assert metrics["accuracy_baseline"] == pytest.approx(0.75)
    assert metrics["precision"] == pytest.approx(0.5) and metrics["recall"] == pytest.approx(1.0)


def test_binary_head_thresholds_add_metrics_per_threshold():
    metrics = _eval(estimators.BinaryClassHead(thresholds=[0.7]), [[-1.0], [2.0]], [[0], [1]])
    assert {"accuracy/positive_threshold_0.7", "precision/positive_threshold_0.7",
            "recall/positive_threshold_0.7"} <= set(metrics)


def test_multi_class_loss_is_softmax_cross_entropy_on_class_ids():
    logits = [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0]]
    loss = _loss(estimators.MultiClassHead(3), logits, [[2], [0]])
    expected = (np.log(3.0) + np.log1p(2 * np.exp(-10.0))) / 2
    assert loss == pytest.approx(expected, rel=1e-5)


def test_multi_class_head_needs_more_than_two_classes():
    with pytest.raises(ValueError, match="n_classes"):
        estimators.MultiClassHead(2)


def test_multi_label_loss_averages_the_classes_sigmoid_losses():
    loss = _loss(estimators.MultiLabelHead(2), [[0.0, 0.0]], [[1, 0]])
    assert loss == pytest.approx(np.log(2.0), rel=1e-6)


def test_poisson_head_predicts_exp_of_the_logits():
    head = estimators.PoissonRegressionHead()
    with tf.Graph().as_default():
        predictions = _run(head.predictions(tf.constant([[0.0], [np.log(3.0)]])))
    np.testing.assert_allclose(predictions["predictions"], [[1.0], [3.0]], rtol=1e-6)
    assert sorted(predictions) == ["logits", "predictions"]


def test_classifier_and_regressor_parse_specs_add_the_label():
    x = tf.feature_column.numeric_column("x")
    spec = estimators.classifier_parse_example_spec([x], label_key="y", weight_column="w")
    assert spec["y"] == tf.io.FixedLenFeature((1,), tf.int64)
    assert sorted(spec) == ["w", "x", "y"]
    spec = estimators.regressor_parse_example_spec([x], label_key="y", label_dimension=2)
    assert spec["y"] == tf.io.FixedLenFeature((2,), tf.float32)
    with pytest.raises(ValueError, match="label should not be used as feature"):
        estimators.classifier_parse_example_spec([x], label_key="x")


def test_binary_head_takes_soft_labels_between_0_and_1():
    loss = _loss(estimators.BinaryClassHead(), [[0.0]], [[0.25]])
    assert loss == pytest.approx(np.log(2.0), rel=1e-6)


def test_eval_metrics_are_keras_2_metric_objects_updated_eagerly_too():
    head = estimators.BinaryClassHead()
    metrics = head.update_metrics(head.metrics(), {}, np.array([[2.0], [-1.0]], np.float32), np.array([[1], [1]]))
    import tf_keras

    assert all(isinstance(m, tf_keras.metrics.Metric) for m in metrics.values())
    assert float(metrics["accuracy"].result()) == pytest.approx(0.5)
    assert float(metrics["accuracy_baseline"].result()) == pytest.approx(1.0)


def test_train_spec_has_no_eval_metric_ops():
    with tf.Graph().as_default():
        spec = estimators.RegressionHead().create_estimator_spec(
            {}, ModeKeys.TRAIN, np.array([[1.0]], np.float32), np.array([[0.0]]), train_op_fn=lambda loss: tf.no_op())
    assert spec.eval_metric_ops == {}


def test_loss_fn_replaces_the_heads_loss_and_may_read_the_features():
    def loss_fn(labels, logits, features):
        return tf.abs(logits - tf.cast(labels, tf.float32)) * features["scale"]

    head = estimators.RegressionHead(loss_fn=loss_fn)
    loss = _loss(head, [[1.0], [3.0]], [[0.0], [0.0]], {"scale": np.array([[2.0], [2.0]], np.float32)})
    assert loss == pytest.approx(4.0)
    with pytest.raises(ValueError, match=r"loss_fn has unexpected args: \['name'\]"):
        estimators.RegressionHead(loss_fn=lambda labels, logits, name: labels)


def test_a_keras_3_optimizer_is_refused_with_the_keras_2_one_to_use():
    import keras

    with tf.Graph().as_default(), pytest.raises(ValueError, match="tf_keras.optimizers.legacy.SGD"):
        estimators.RegressionHead().create_estimator_spec(
            {}, ModeKeys.TRAIN, np.array([[1.0]], np.float32), np.array([[0.0]]), optimizer=keras.optimizers.SGD(),
            trainable_variables=[tf.Variable(1.0)])
