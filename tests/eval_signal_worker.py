"""A process the signal-during-evaluation tests signal: `python -m tests.eval_signal_worker MODEL_DIR CALL PATH`.

CALL `train_and_evaluate`: trains 4 steps (a checkpoint at step 4), then evaluates it; CALL `evaluate`:
trains 4 steps, then calls evaluate(). PATH is `tf2` or `graph` (a tf.compat.v1 model_fn on the graph
path). The evaluation reads EVAL_BATCHES batches, each made by a py_function that reports it and sleeps
--batch_delay_s (the batch after --long_batch's also sleeps 300 s in C++: a long step), so a whole
evaluation takes minutes.
JSON lines on stdout, flushed at once:
  {"event": "eval_batch", "index": I}                 the input pipeline made evaluation batch I
  {"event": "interrupted", "step": S, "checkpoint": P, "message": M, "kind": K}  TrainingInterrupted (K: its class)
  {"event": "done", "results": {...}}                 the call returned
On TrainingInterrupted the process exits as main.py does: status 128 + the signal's number.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.data.experimental.ops import testing  # noqa: E402  (tf.data's C++ sleep, test-only)

from estimators import (  # noqa: E402
    CrossShardOptimizer,
    Estimator,
    EstimatorSpec,
    EvalSpec,
    ModeKeys,
    RunConfig,
    TPUConfig,
    TrainingInterrupted,
    TrainSpec,
    train_and_evaluate,
)

FEATURES, CLASSES, BATCH, EVAL_BATCHES = 4, 3, 8, 400


def emit(event: str, **fields) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def train_input_fn():
    x = np.random.RandomState(0).randn(64, FEATURES).astype("float32")
    y = np.argmax(x[:, :CLASSES], axis=1).astype("int32")
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(BATCH, drop_remainder=True)


def eval_input_fn(batch_delay_s: float, long_batch: int):
    def made(index) -> np.float32:
        emit("eval_batch", index=int(index))
        time.sleep(batch_delay_s)
        return np.float32(0.0)

    def batch(index):
        zero = tf.reshape(tf.py_function(made, [index], tf.float32), [])
        return tf.zeros([BATCH, FEATURES]) + zero, tf.zeros([BATCH], tf.int32)

    def input_fn():
        if long_batch < 0:
            return tf.data.Dataset.range(EVAL_BATCHES).map(batch)
        # The batch after `long_batch` waits 300 s in TensorFlow's own sleep (C++, no Python, no GIL): the main
        # thread then waits inside TensorFlow, where Python runs no signal handler.
        long = tf.data.Dataset.range(long_batch + 1, long_batch + 2).map(batch).apply(
            testing.sleep(300_000_000))
        return tf.data.Dataset.range(long_batch + 1).map(batch).concatenate(long).concatenate(
            tf.data.Dataset.range(long_batch + 2, EVAL_BATCHES).map(batch))

    return input_fn


def tf2_model_fn(features, labels, mode):
    logits = keras.layers.Dense(CLASSES, kernel_initializer="zeros")(features)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    train_op = CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss) if mode == ModeKeys.TRAIN else None
    return EstimatorSpec(mode, loss=loss, train_op=train_op)


def graph_model_fn(features, labels, mode):
    kernel = tf.compat.v1.get_variable("kernel", [FEATURES, CLASSES], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, tf.matmul(features, kernel))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()) if mode == ModeKeys.TRAIN else None
    return EstimatorSpec(mode, loss=loss, train_op=train_op)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("call", choices=["train_and_evaluate", "evaluate"])
    parser.add_argument("path", choices=["tf2", "graph"])
    parser.add_argument("--batch_delay_s", type=float, default=0.2)
    parser.add_argument("--long_batch", type=int, default=-1)
    args = parser.parse_args()
    config = RunConfig(model_dir=args.model_dir, save_checkpoints_steps=4, log_step_count_steps=10**9,
                       execution=args.path, tpu_config=TPUConfig(iterations_per_loop=2))
    estimator = Estimator(tf2_model_fn if args.path == "tf2" else graph_model_fn, config=config)
    eval_fn = eval_input_fn(args.batch_delay_s, args.long_batch)
    try:
        if args.call == "train_and_evaluate":
            results, _ = train_and_evaluate(estimator, TrainSpec(train_input_fn, max_steps=4),
                                            EvalSpec(eval_fn, steps=None, throttle_secs=0))
        else:
            estimator.train(train_input_fn, max_steps=4)
            results = estimator.evaluate(eval_fn)
    except TrainingInterrupted as stopped:
        emit("interrupted", step=stopped.step, checkpoint=stopped.checkpoint, message=str(stopped),
             kind=type(stopped).__name__)
        sys.exit(128 + getattr(signal, stopped.signal_name))
    emit("done", results={k: float(v) for k, v in (results or {}).items()})


if __name__ == "__main__":
    main()
