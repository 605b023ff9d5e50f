"""A process that makes one engine call and returns: `python -m tests.exit_worker MODEL_DIR CALL REPLICAS [PATH]`.

CALL is train, evaluate, predict or predict_some (the rest train a few steps first; predict_some reads three
predictions of many and drops the generator, as a notebook does, then prints `ALIVE <n>`: the threads besides
the main one the interpreter would wait for at exit); REPLICAS is 1 or 8
(8 logical CPU devices, MirroredStrategy over them, as tests/conftest.py sets them up); PATH is
`tf2` (default) or `graph` (the model_fn asks for the graph path). Its last line, flushed, is
`LAST <call>`: tests/test_process_exit.py times how long the process takes to end after it. CALL
`bare` imports TensorFlow and the engine, prints the line and returns: the baseline to compare with.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402


def _devices(replicas: int) -> None:
    if replicas > 1:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)


def graph_model_fn(features, labels, mode, params):
    """Softmax regression in tf.compat.v1 terms (variables, a v1 optimizer): the graph path runs it."""
    from estimators import EstimatorSpec, ModeKeys

    del params
    kernel = tf.compat.v1.get_variable("kernel", [4, 3], initializer=tf.compat.v1.zeros_initializer())
    logits = tf.matmul(features, kernel)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return EstimatorSpec(mode, loss=loss, train_op=train_op)


def main() -> None:
    model_dir, call, replicas = sys.argv[1], sys.argv[2], int(sys.argv[3])
    path = sys.argv[4] if len(sys.argv) > 4 else "tf2"
    _devices(replicas)
    from estimators import Estimator, RunConfig, TPUConfig, TPUEstimator
    from tests import engine_models as m

    if call != "bare":
        strategy = (tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)]) if replicas > 1
                    else None)
        config = RunConfig(model_dir=model_dir, train_distribute=strategy, execution=path,
                           tpu_config=TPUConfig(iterations_per_loop=2))
        if path == "graph":  # TPUEstimator(use_tpu=False) runs the graph path on one device, as 2.15 did
            estimator = Estimator(graph_model_fn, config=config.replace(eval_distribute=strategy),
                                  params={"batch_size": 16})
        else:
            estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=16,
                                     eval_batch_size=16, predict_batch_size=16)
        x, y = m.dataset(64)
        estimator.train(m.train_input_fn(x, y), max_steps=4)
        if call == "evaluate":
            print("RESULT", estimator.evaluate(m.eval_input_fn(x, y))["loss"])
        elif call == "predict":
            print("RESULT", len(list(estimator.predict(m.predict_input_fn(x)))))
        elif call == "predict_some":
            predictions = estimator.predict(m.predict_input_fn(np.tile(x, (50, 1))))
            print("RESULT", [next(predictions) is not None for _ in range(3)])
            del predictions
            waited_for = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
            print("ALIVE", len(waited_for), flush=True)
    print(f"LAST {call}", flush=True)


if __name__ == "__main__":
    main()
