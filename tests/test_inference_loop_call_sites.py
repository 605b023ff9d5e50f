"""The eval and predict loops run model_fn from one call site: a TPU compiles each `strategy.run` site of a
program on its own, so a second site would double the compile time of every evaluation and prediction."""

from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

from estimators import ModeKeys, RunConfig, TPUConfig, TPUEstimator
from tests import engine_models as m


def _outermost_function(graph) -> str:
    """The tf.function a graph is traced in: its outermost function graph's name."""
    name = None
    while hasattr(graph, "outer_graph"):
        name, graph = graph.name, graph.outer_graph
    return name


def _counting(calls: Counter):
    def model_fn(features, labels, mode, params):
        calls[(mode, _outermost_function(tf.compat.v1.get_default_graph()))] += 1
        return m.linear_model_fn(features, labels, mode, params)

    return model_fn


def _estimator(model_dir, calls: Counter, strategy=None) -> TPUEstimator:
    config = RunConfig(model_dir=str(model_dir), train_distribute=strategy,
                       tpu_config=TPUConfig(iterations_per_loop=3))
    return TPUEstimator(_counting(calls), config=config, use_tpu=False,
                        train_batch_size=16, eval_batch_size=16, predict_batch_size=16)


@pytest.mark.parametrize("replicas", [1, 8], ids=["one_replica", "eight_replicas"])
def test_each_replica_traces_model_fn_into_the_eval_and_predict_loop_once(tmp_path, replicas, request):
    strategy = request.getfixturevalue("eight_replicas") if replicas == 8 else None
    x, y = m.dataset(100)
    calls: Counter = Counter()
    estimator = _estimator(tmp_path, calls, strategy)
    estimator.train(m.train_input_fn(x, y), max_steps=2)
    results = estimator.evaluate(m.eval_input_fn(x, y))
    predictions = list(estimator.predict(m.predict_input_fn(x)))

    assert calls[(ModeKeys.EVAL, "loop")] == replicas
    assert calls[(ModeKeys.PREDICT, "loop")] == replicas
    # the loops, of at most 3 steps each, still cover every row once
    assert results["examples"] == 100
    assert len(predictions) == 100
    kernel = estimator.get_variable_value("sequential/dense/kernel")
    bias = estimator.get_variable_value("sequential/dense/bias")
    np.testing.assert_allclose(np.stack([p["logits"] for p in predictions]), x @ kernel + bias, rtol=1e-5, atol=1e-6)
