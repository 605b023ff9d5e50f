"""Two worker processes on 127.0.0.1 (TF_CONFIG) train and evaluate as one replica does on the same batch."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from estimators import RunConfig, TPUConfig, TPUEstimator
from tests import engine_models as m
from tests.worker_processes import ROOT, run_workers

WORKER = textwrap.dedent("""
    import json, sys
    import tensorflow as tf
    from estimators import RunConfig, TPUConfig, TPUEstimator
    from estimators import estimator as estimator_module
    from estimators.checkpoint import model_dir_check
    from estimators.graph import train as graph_train
    from estimators.tf2 import executor
    from tests import engine_models as m

    probes = []  # whether each model_dir check tried a write (two probing one missing folder race)
    check_model_dir = model_dir_check.check_model_dir
    for caller in (estimator_module, executor, graph_train):  # every module that checks model_dir
        assert caller.check_model_dir is check_model_dir
        caller.check_model_dir = lambda model_dir, write: probes.append(write) or check_model_dir(model_dir, write)

    estimator = TPUEstimator(m.linear_model_fn, use_tpu=False, train_batch_size=16, eval_batch_size=16,
                             params={"adam": True},
                             config=RunConfig(model_dir=sys.argv[1], save_checkpoints_steps=2,
                                              tpu_config=TPUConfig(iterations_per_loop=2)))
    x, y = m.dataset(64)

    def train_input_fn(params):
        ctx = params["context"]
        ds = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params["batch_size"], drop_remainder=True)
        return ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)

    def eval_input_fn(params):
        ctx = params["context"]
        ds = tf.data.Dataset.from_tensor_slices((x[:50], y[:50])).batch(params["batch_size"])
        return ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)

    estimator.train(train_input_fn, max_steps=6)
    result = estimator.evaluate(eval_input_fn)
    print("RESULT " + json.dumps({**{k: float(v) for k, v in result.items()}, "write_probes": probes}))
""")


def test_two_workers_match_one_replica_and_only_the_chief_writes(tmp_path):
    chief_result, worker_result = run_workers(WORKER, [str(tmp_path / "workers")])
    single = TPUEstimator(m.linear_model_fn, use_tpu=False, train_batch_size=16, params={"adam": True},
                          config=RunConfig(model_dir=str(tmp_path / "single"), tpu_config=TPUConfig(2)))
    single.train(m.train_input_fn(*m.dataset(64)), max_steps=6)
    reloaded = TPUEstimator(m.linear_model_fn, model_dir=str(tmp_path / "workers"), use_tpu=False)
    kernel = reloaded.get_variable_value("sequential/dense/kernel")
    np.testing.assert_allclose(kernel, single.get_variable_value("sequential/dense/kernel"), rtol=1e-5, atol=1e-7)
    x, y = m.dataset(64)
    # the loss off the TPU is 2.15's mean over input_fn's batches: each worker's host batches of 16 / 2 rows
    loss, accuracy = m.numpy_eval(kernel, reloaded.get_variable_value("sequential/dense/bias"), x[:50], y[:50],
                                  batch_size=8)
    assert chief_result.pop("write_probes") == [True, False]  # train probes, evaluate only reads
    assert worker_result.pop("write_probes") == [False, False]  # a non-chief worker writes nothing
    assert chief_result == worker_result
    assert chief_result["examples"] == 50
    assert chief_result["loss"] == pytest.approx(loss, rel=1e-5)
    assert chief_result["accuracy"] == pytest.approx(accuracy)
    written = sorted(f for f in os.listdir(tmp_path / "workers") if f.endswith(".index"))
    assert written == ["model.ckpt-2.index", "model.ckpt-4.index", "model.ckpt-6.index"]


V1_METRICS_WORKER = textwrap.dedent("""
    import json, sys
    import tensorflow as tf
    from estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig
    from tests import engine_models as m
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        logits = m.linear_model()(features)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        if mode == ModeKeys.TRAIN:
            return EstimatorSpec(mode, loss=loss, train_op=v1.train.GradientDescentOptimizer(0.5).minimize(
                loss, global_step=v1.train.get_global_step()))
        classes = tf.argmax(logits, 1)
        return EstimatorSpec(mode, loss=loss, eval_metric_ops={  # auc's value is built after its updates
            "accuracy": v1.metrics.accuracy(labels, classes),
            "auc": v1.metrics.auc(tf.equal(labels, 0), tf.nn.softmax(logits)[:, 0]),
            "mean_per_class_accuracy": v1.metrics.mean_per_class_accuracy(labels, classes, logits.shape[-1])})

    x, y = m.dataset(64)
    estimator = Estimator(model_fn, config=RunConfig(model_dir=sys.argv[1]))
    if sys.argv[2:] == ["train"]:
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16, drop_remainder=True),
                        max_steps=4)
    evaluate = lambda: tf.data.Dataset.from_tensor_slices((x[:48], y[:48])).batch(8)
    results = [estimator.evaluate(evaluate) for _ in range(2)]
    print("RESULT " + json.dumps([{k: float(v) for k, v in r.items()} for r in results]))
""")


def test_two_workers_read_v1_metric_values_as_one_process_does(tmp_path):
    """The v1 values are read by a pruned model_fn call whose collectives get their call-time instance keys."""
    chief, worker = run_workers(V1_METRICS_WORKER, [str(tmp_path / "workers"), "train"])
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    alone = subprocess.run([sys.executable, "-c", V1_METRICS_WORKER, str(tmp_path / "workers")], cwd=ROOT,
                           env=dict(env, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True,
                           timeout=240)
    assert alone.returncode == 0, alone.stderr[-3000:]
    single = json.loads(alone.stdout.split("RESULT ", 1)[1].splitlines()[0])
    assert chief == worker
    assert chief[0] == chief[1]
    assert sorted(chief[0]) == ["accuracy", "auc", "global_step", "loss", "mean_per_class_accuracy"]
    for name, value in single[0].items():
        assert chief[0][name] == pytest.approx(value, rel=1e-6), name
