"""Two worker processes on 127.0.0.1 (TF_CONFIG) train a TF1 program on the graph path under
MultiWorkerMirroredStrategy as the multi-worker Estimator tutorial did: each worker's input_fn shards with its
InputContext, the replicas' gradients are all-reduced, and the result equals one process training on the
global batch."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf

import estimators
from tests.worker_processes import run_workers

PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    if sys.argv[2] == "eager_disabled":
        tf.compat.v1.disable_eager_execution()  # the tutorial's first line
    import estimators
    from tests.test_graph_path_multi_worker import X, Y, linear_model_fn

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    # Eager execution disabled chooses the graph path by itself; with it on, this v1 program asks for it.
    config = estimators.RunConfig(model_dir=sys.argv[1], train_distribute=strategy, save_checkpoints_steps=10,
                                  execution="graph" if sys.argv[2] == "eager" else None)

    def input_fn(mode, input_context=None):
        dataset = tf.data.Dataset.from_tensor_slices((X, Y)).repeat()
        if input_context is not None:
            dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return dataset.batch(4)

    estimator = estimators.Estimator(linear_model_fn, config=config)
    estimator.train(input_fn, steps=3)
    result = {"chief": config.is_chief}
    if config.is_chief:  # the checkpoint it wrote at the end
        result.update(w=estimator.get_variable_value("w").tolist(), b=estimator.get_variable_value("b").tolist(),
                      step=int(estimator.get_variable_value("global_step")))
    print("RESULT " + json.dumps(result))
""")

X = (np.arange(32, dtype=np.float32).reshape(16, 2) % 7 - 3.0) / 3.0
Y = (X @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)


def linear_model_fn(features, labels, mode):
    """A TF1 linear regression with plain SGD (its loss scaled by 1/replicas under a strategy)."""
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer([[0.1], [0.2]]))
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) + b - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("mode", ["eager_disabled", "eager"])
def test_two_workers_on_the_graph_path_train_as_one_process_on_the_global_batch(tmp_path, mode):
    """Each worker takes batches of 4 from its shard (rows 0,2,4,6 and 1,3,5,7 of each 8): the chief's checkpoint
    after three steps equals one process's three steps on batches of 8."""
    chief, worker = run_workers(PROGRAM, [str(tmp_path / "workers"), mode])
    assert (chief["chief"], worker["chief"]) == (True, False)
    single = estimators.Estimator(linear_model_fn, config=estimators.RunConfig(
        model_dir=str(tmp_path / "single"), execution="graph"))
    single.train(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(8), steps=3)
    assert chief["step"] == 3
    np.testing.assert_allclose(np.array(chief["w"]), single.get_variable_value("w"), rtol=1e-5)
    np.testing.assert_allclose(np.array(chief["b"]), single.get_variable_value("b"), rtol=1e-5)


TUTORIAL = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, "tests/compat/programs")
    import multiworker_tutorial as tutorial  # its first line: tf.compat.v1.disable_eager_execution()
    import tensorflow as tf
    import estimators

    tutorial.NUM_TRAIN_EXAMPLES, tutorial.NUM_EVAL_EXAMPLES = 512, 256
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    config = estimators.RunConfig(model_dir=sys.argv[1], train_distribute=strategy, tf_random_seed=0)
    classifier = estimators.Estimator(model_fn=tutorial.model_fn, config=config)
    calls = []
    for _ in range(2):  # the tutorial's cell, then the same cell run again: the second call resumes the first's
        result = estimators.train_and_evaluate(classifier, train_spec=estimators.TrainSpec(input_fn=tutorial.input_fn),
                                               eval_spec=estimators.EvalSpec(input_fn=tutorial.input_fn))
        calls.append({"returned": result, "step": int(classifier.get_variable_value("global_step")),
                      "eval_dir": tf.io.gfile.exists(sys.argv[1] + "/eval")})
    print("RESULT " + json.dumps({"chief": config.is_chief, "calls": calls}, default=float))
""")


@pytest.mark.needs_tf_keras
def test_the_multi_worker_tutorial_run_twice_resumes_its_checkpoint_in_the_later_call(tmp_path, monkeypatch):
    """The tutorial (eager disabled, MultiWorkerMirroredStrategy in RunConfig, train_and_evaluate over one epoch of
    each worker's shard) twice on one model_dir: the later call restores the first call's checkpoint (2.15 read it
    back; a later call once failed with NotFoundError here) and trains one more epoch from it."""
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")  # the tutorial's tf.keras layers inside a TF1 graph
    chief, worker = run_workers(TUTORIAL, [str(tmp_path / "tutorial")], timeout=400)
    assert (chief["chief"], worker["chief"]) == (True, False)
    first, later = chief["calls"]
    assert (first["step"], later["step"]) == (4, 8)  # 256 examples per worker's shard, batches of 64, per call
    # As under 2.15's distribute coordinator: workers train and return None, evaluation is an 'evaluator' task's.
    assert [call["returned"] for call in chief["calls"] + worker["calls"]] == [None] * 4
    assert not later["eval_dir"]
