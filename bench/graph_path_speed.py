"""Issue 16's speed check: the TF1-style seed CNN on real TF 2.15 TPUEstimator, our graph path and our TF2 path.

The same model_fn (tf.keras layers in model_fn, tf.compat.v1.train.AdamOptimizer, minimize(global_step=...))
runs under three contenders, each in its own process, taking turns (ABCABC...) so the machine's drift
hits all of them alike:
  tf215  TPUEstimator(use_tpu=False) of tensorflow-estimator 2.15 (--python215, default /work/venv215)
  graph  estimators.TPUEstimator(use_tpu=False), RunConfig(execution="graph")
  tf2    the same with RunConfig(execution="tf2")
Steady-state speed: two train() calls of N1 and N2 steps after a warm-up call; (N2 - N1) x batch over the
difference of their wall times, so graph building, session creation and tracing cancel out.

    .venv/bin/python bench/graph_path_speed.py --rounds 5

It prints every process's figure, each contender's median and best, and the ratios of both; compare the best
(bench/speed_program.py:summary says why).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys

if __package__ in (None, ""):  # run as a script: the repository root on the path, for `bench`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.speed_program import ratios, run_speed_program, summary, taking_turns  # noqa: E402

PROGRAM = r"""
import json, os, sys, tempfile, time
import numpy as np
import tensorflow as tf
if sys.argv[1] == "tf215":
    from tensorflow.compat.v1.estimator import tpu as est
    RunConfig = est.RunConfig
    config_args = {}
else:
    import estimators as est
    RunConfig = est.RunConfig
    config_args = {"execution": sys.argv[1]}
BATCH, N1, N2 = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.RandomState(0)
images = rng.rand(1024, 28, 28, 1).astype(np.float32)
labels = rng.randint(0, 10, size=(1024,)).astype(np.int32)

def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).repeat()
    return dataset.batch(params["batch_size"], drop_remainder=True)

def model_fn(features, labels, mode, params):
    layers = tf.keras.layers
    x = features
    for filters in (64, 128, 256):
        x = layers.BatchNormalization()(x, training=mode == "train")
        x = layers.Conv2D(filters, 5, padding="same", activation="elu")(x)
        x = layers.MaxPooling2D(2)(x)
        x = layers.Dropout(0.25)(x, training=mode == "train")
    x = layers.Dense(256, activation="elu")(layers.Flatten()(x))
    logits = layers.Dense(10)(layers.Dropout(0.5)(x, training=mode == "train"))
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return est.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

config = RunConfig(model_dir=tempfile.mkdtemp(), save_checkpoints_steps=None, save_checkpoints_secs=None,
                   log_step_count_steps=1000, save_summary_steps=1000, **config_args)
estimator = est.TPUEstimator(model_fn=model_fn, config=config, use_tpu=False, train_batch_size=BATCH)
estimator.train(input_fn, steps=5)
times = []
for steps in (N1, N2):
    started = time.perf_counter()
    estimator.train(input_fn, steps=steps)
    times.append(time.perf_counter() - started)
print("SPEED", json.dumps({"examples_per_sec": (N2 - N1) * BATCH / (times[1] - times[0]), "seconds": times}))
"""


def run(contender: str, python: str, batch: int, n1: int, n2: int) -> dict:
    # tf.keras is Keras 2 on TF 2.15 itself; on TF 2.21 that is tf_keras
    env = {"TF_USE_LEGACY_KERAS": "1"} if contender != "tf215" else {}
    return run_speed_program(PROGRAM, python, [contender, str(batch), str(n1), str(n2)], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, nargs=2, default=(10, 60), metavar=("N1", "N2"))
    parser.add_argument("--python215", default="/work/venv215/bin/python")
    args = parser.parse_args()
    pythons = {"tf215": args.python215, "graph": sys.executable, "tf2": sys.executable}
    measures = {name: functools.partial(lambda n, p: run(n, p, args.batch, *args.steps)["examples_per_sec"], name,
                                        python) for name, python in pythons.items()}
    figures = summary(taking_turns(measures, args.rounds, "examples/sec", 1), higher_is_better=True)
    print(json.dumps({"examples_per_sec": figures, "graph_vs_tf215": ratios(figures, "graph", "tf215"),
                      "graph_vs_tf2": ratios(figures, "graph", "tf2")}, indent=1))


if __name__ == "__main__":
    main()
