"""Writes tests/reference/canned_heads_215.json: what tf.estimator 2.15's heads computed for small fixed programs:
the EVAL spec's loss and its Keras metrics (AUC, precision, recall, accuracy baseline, means...) accumulated over
two weighted batches, the training loss under each reduction, for each head. tests/test_canned_heads_215.py runs
the same programs (PROGRAMS below, imported from this file) on `estimators`.

Run on TF 2.15: /work/venv215/bin/python tests/reference/make_canned_heads_215.py
"""

import json
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "canned_heads_215.json")


def _evaluate(lib, head, batches, weighted=True, regularization=None) -> dict:
    """The EVAL spec's metrics after updating on every batch (logits, labels, weights), and each batch's loss."""
    logits0, labels0, weights0 = batches[0]
    with tf.Graph().as_default():
        logits = tf.compat.v1.placeholder(tf.float32, np.shape(logits0))
        labels = tf.compat.v1.placeholder(tf.as_dtype(np.asarray(labels0).dtype), np.shape(labels0))
        weights = tf.compat.v1.placeholder(tf.float32, np.shape(weights0))
        features = {"x": tf.zeros_like(logits), "w": weights} if weighted else {"x": tf.zeros_like(logits)}
        reg = [tf.constant(r) for r in regularization] if regularization else None
        spec = head.create_estimator_spec(features=features, mode=lib.ModeKeys.EVAL, logits=logits, labels=labels,
                                          regularization_losses=reg)
        values = {key: value for key, (value, _) in spec.eval_metric_ops.items()}
        updates = {key: update for key, (_, update) in spec.eval_metric_ops.items()}
        losses = []
        with tf.compat.v1.Session() as session:
            session.run([tf.compat.v1.local_variables_initializer(), tf.compat.v1.tables_initializer()])
            for batch_logits, batch_labels, batch_weights in batches:
                feed = {logits: batch_logits, labels: batch_labels, weights: batch_weights}
                loss, _ = session.run((spec.loss, updates), feed)
                losses.append(float(loss))
            metrics = session.run(values)
    return {"losses": losses, "metrics": {key: float(value) for key, value in metrics.items()}}


def _training_loss(lib, head, logits, labels, weights) -> float:
    with tf.Graph().as_default():
        loss = head.loss(labels=labels, logits=np.asarray(logits, np.float32),
                         features={"w": np.asarray(weights, np.float32)}, mode=lib.ModeKeys.TRAIN)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.tables_initializer())
            return float(session.run(loss))


_BINARY_BATCHES = [
    (np.array([[-1.0], [2.0], [0.3], [-0.2]], np.float32), np.array([[0], [1], [0], [1]], np.int64),
     np.array([[1.0], [2.0], [0.5], [1.5]], np.float32)),
    (np.array([[1.5], [-2.5], [0.1], [3.0]], np.float32), np.array([[1], [1], [0], [0]], np.int64),
     np.array([[0.5], [1.0], [3.0], [1.0]], np.float32)),
]


def binary_metrics(lib) -> dict:
    """BinaryClassHead's metrics (Keras AUCs among them) with weights, thresholds and a regularization loss."""
    head = lib.BinaryClassHead(weight_column="w", thresholds=[0.3, 0.6])
    return _evaluate(lib, head, _BINARY_BATCHES, regularization=[0.25])


def binary_vocabulary_unweighted(lib) -> dict:
    """BinaryClassHead with string labels through label_vocabulary, no weights, a head name."""
    batches = [(logits, np.where(labels == 1, b"yes", b"no"), weights) for logits, labels, weights in _BINARY_BATCHES]
    head = lib.BinaryClassHead(label_vocabulary=["no", "yes"], name="b")
    return _evaluate(lib, head, batches, weighted=False)


def multi_class_metrics(lib) -> dict:
    head = lib.MultiClassHead(3, weight_column="w")
    batches = [
        (np.array([[1.0, 0.0, -1.0], [0.2, 2.0, 0.1], [-1.0, 0.5, 0.4]], np.float32),
         np.array([[0], [2], [2]], np.int64), np.array([[1.0], [0.5], [2.0]], np.float32)),
        (np.array([[0.0, 0.3, 3.0], [1.0, 1.1, 0.9], [2.0, -2.0, 0.0]], np.float32),
         np.array([[2], [0], [1]], np.int64), np.array([[1.5], [1.0], [0.25]], np.float32)),
    ]
    return _evaluate(lib, head, batches)


def multi_label_metrics(lib) -> dict:
    """MultiLabelHead's AUCs over every class, per-threshold and per-class metrics, weighted."""
    head = lib.MultiLabelHead(3, weight_column="w", thresholds=[0.5], classes_for_class_based_metrics=[0, 2])
    batches = [
        (np.array([[1.0, -1.0, 0.5], [-0.5, 2.0, 0.1], [0.3, 0.2, -2.0]], np.float32),
         np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]], np.int64), np.array([[1.0], [2.0], [0.5]], np.float32)),
        (np.array([[-1.5, 0.5, 1.0], [2.0, -0.1, -0.3], [0.0, 1.0, 0.7]], np.float32),
         np.array([[0, 0, 1], [1, 0, 0], [0, 1, 1]], np.int64), np.array([[1.0], [0.5], [1.5]], np.float32)),
    ]
    return _evaluate(lib, head, batches)


_REGRESSION_BATCHES = [
    (np.array([[1.0, 2.0], [0.5, -1.0]], np.float32), np.array([[1.5, 1.0], [0.0, -2.0]], np.float32),
     np.array([[1.0, 2.0], [0.5, 1.0]], np.float32)),
    (np.array([[3.0, 0.0], [-1.0, 1.0]], np.float32), np.array([[2.0, 0.5], [-1.5, 2.0]], np.float32),
     np.array([[2.0, 0.5], [1.0, 1.0]], np.float32)),
]


def regression_per_logit_weights(lib) -> dict:
    """RegressionHead with label_dimension 2 and a weight per logit."""
    return _evaluate(lib, lib.RegressionHead(label_dimension=2, weight_column="w"), _REGRESSION_BATCHES)


def poisson_regression(lib) -> dict:
    batches = [(logits[:, :1], np.abs(labels[:, :1]).round(), weights[:, :1])
               for logits, labels, weights in _REGRESSION_BATCHES]
    return _evaluate(lib, lib.PoissonRegressionHead(weight_column="w"), batches)


def logistic_regression(lib) -> dict:
    batches = [(logits[:, :1], np.array([[0.25], [0.9]], np.float32), weights[:, :1])
               for logits, _, weights in _REGRESSION_BATCHES]
    return _evaluate(lib, lib.LogisticRegressionHead(weight_column="w"), batches)


def multi_head(lib) -> dict:
    """MultiHead of a multi-label and a regression head on one logits tensor, head weights 1 and 3."""
    heads = [lib.MultiLabelHead(2, name="labels"), lib.RegressionHead(1, name="value")]
    head = lib.MultiHead(heads, head_weights=[1.0, 3.0])
    with tf.Graph().as_default():
        logits = np.array([[1.0, -0.5, 2.0], [0.2, 0.3, -1.0]], np.float32)
        labels = {"labels": np.array([[1, 0], [1, 1]], np.int64), "value": np.array([[1.5], [0.0]], np.float32)}
        spec = head.create_estimator_spec(features={"x": logits}, mode=lib.ModeKeys.EVAL, logits=logits,
                                          labels=labels)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            loss, _ = session.run((spec.loss, {k: u for k, (_, u) in spec.eval_metric_ops.items()}))
            metrics = session.run({k: v for k, (v, _) in spec.eval_metric_ops.items()})
    return {"losses": [float(loss)], "metrics": {key: float(value) for key, value in metrics.items()}}


def reductions(lib) -> dict:
    """Training losses under SUM and SUM_OVER_BATCH_SIZE, weighted, logits [batch, 2, 1] (a sequence axis)."""
    logits = np.array([[[1.0], [-2.0]], [[0.5], [3.0]]], np.float32)
    labels = np.array([[[1], [0]], [[0], [1]]], np.int64)
    weights = np.array([[1.0, 2.0], [0.5, 1.5]], np.float32)
    result = {}
    for reduction in ("sum", "sum_over_batch_size"):
        result[f"binary_{reduction}"] = _training_loss(lib, lib.BinaryClassHead(weight_column="w",
                                                                                loss_reduction=reduction),
                                                       logits, labels, weights)
        result[f"regression_{reduction}"] = _training_loss(
            lib, lib.RegressionHead(weight_column="w", loss_reduction=reduction), logits,
            labels.astype(np.float32), weights)
    return {"losses": [], "metrics": result}


PROGRAMS = {name: globals()[name] for name in (
    "binary_metrics", "binary_vocabulary_unweighted", "multi_class_metrics", "multi_label_metrics",
    "regression_per_logit_weights", "poisson_regression", "logistic_regression", "multi_head", "reductions")}


def main() -> None:
    reference = {"versions": {"tensorflow": tf.__version__},
                 "programs": {name: program(tf.estimator) for name, program in PROGRAMS.items()}}
    with open(OUT, "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
