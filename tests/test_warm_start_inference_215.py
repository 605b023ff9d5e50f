"""evaluate() and predict() on a model_dir without a checkpoint start from warm_start_from, as 2.15 did.

tf.estimator 2.15 warm-started (trainable variables, by default) in evaluate and predict too when model_dir had
no checkpoint. The graph path used to evaluate the fresh initial values instead, without a word: w 100.0
where 2.15 reported 2.0. Reference (TF 2.15.1 + tensorflow-estimator 2.15.0, this program): evaluate
{'loss': 2.0, 'w': 2.0, 's': 100.0, 'global_step': 0}, predict {'w': 2.0, 's': 100.0} (s is not trainable).
"""

import pytest
import tensorflow as tf

import estimators

REFERENCE_215 = {"loss": 2.0, "w": 2.0, "s": 100.0, "global_step": 0}


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": [[1.0]]}, [[1.0]])).repeat()


def _model_fn(features, labels, mode, params):
    del features
    w = tf.compat.v1.get_variable("w", initializer=params["w"])
    s = tf.compat.v1.get_variable("stat", initializer=params["w"], trainable=False)
    loss = tf.reduce_mean(labels * w) if labels is not None else None
    train_op = None
    if mode == estimators.ModeKeys.TRAIN:
        train_op = tf.group(tf.compat.v1.train.get_global_step().assign_add(1), w.assign_add(1.0), s.assign_add(10.0))
    extra = {"scaffold": tf.compat.v1.train.Scaffold()} if params["graph"] else {}
    return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    predictions={"w": tf.reshape(w, [1]), "s": tf.reshape(s, [1])},
                                    eval_metric_ops={"w": tf.compat.v1.metrics.mean(w),
                                                     "s": tf.compat.v1.metrics.mean(s)}, **extra)


def _warm_started(tmp_path, execution):
    graph = execution == "graph"
    source = estimators.Estimator(_model_fn, params={"w": 0.0, "graph": graph},
                                  config=estimators.RunConfig(model_dir=str(tmp_path / "a"), execution=execution))
    source.train(_input_fn, steps=2)
    return estimators.Estimator(_model_fn, params={"w": 100.0, "graph": graph}, warm_start_from=source.model_dir,
                                config=estimators.RunConfig(model_dir=str(tmp_path / "b"), execution=execution))


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_evaluate_without_a_checkpoint_starts_from_warm_start_from(tmp_path, execution):
    results = _warm_started(tmp_path, execution).evaluate(_input_fn, steps=1)
    assert {key: float(value) for key, value in results.items()} == REFERENCE_215


@pytest.mark.parametrize("execution", ["tf2", "graph"])
def test_predict_without_a_checkpoint_starts_from_warm_start_from(tmp_path, execution):
    predicted = next(_warm_started(tmp_path, execution).predict(_input_fn))
    assert {key: float(value) for key, value in predicted.items()} == {"w": 2.0, "s": 100.0}
