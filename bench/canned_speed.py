"""Issue 19's speed check: DNNLinearCombinedClassifier step time here vs tf.estimator 2.15, side by side.

The census wide & deep model (tests/compat/programs/wide_deep_census: vocabulary, hashed, bucketized and crossed
columns on the linear side; indicator and embedding columns into a [100, 75, 50, 25] DNN) on in-memory
census-like rows, in two contenders, each in its own process, taking turns (ABAB...) so the machine's drift
hits both alike:
  tf215  tf.estimator.DNNLinearCombinedClassifier of tensorflow-estimator 2.15 (--python215)
  ours   estimators.DNNLinearCombinedClassifier (this repository, the graph path)
Steady state: two train() calls of N1 and N2 steps after a warm-up call; the step time is the difference of
their wall times over N2 - N1 steps, so graph building, session start and checkpoint restore/save cancel out.

    .venv/bin/python bench/canned_speed.py --rounds 5

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
import json, sys, tempfile, time
import numpy as np
import tensorflow as tf
if sys.argv[1] == "tf215":
    lib = tf.estimator
else:
    import estimators as lib
BATCH, N1, N2 = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.RandomState(0)
ROWS = 4096
VOCAB = {
    "education": ["Bachelors", "HS-grad", "11th", "Masters", "9th", "Some-college", "Doctorate"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Widowed"],
    "relationship": ["Husband", "Not-in-family", "Wife", "Own-child", "Unmarried"],
    "workclass": ["Private", "Self-emp-not-inc", "Local-gov", "State-gov", "?"],
}
data = {name: np.array(words)[rng.randint(len(words), size=ROWS)] for name, words in VOCAB.items()}
data["occupation"] = np.array(["occupation-%d" % i for i in rng.randint(40, size=ROWS)])
for name in ("age", "education_num", "capital_gain", "capital_loss", "hours_per_week"):
    data[name] = rng.randint(0, 80, size=ROWS).astype(np.float32)
labels = (rng.rand(ROWS) < 0.25)
fc = tf.feature_column
numeric = [fc.numeric_column(n) for n in ("age", "education_num", "capital_gain", "capital_loss", "hours_per_week")]
vocab = {n: fc.categorical_column_with_vocabulary_list(n, words) for n, words in VOCAB.items()}
occupation = fc.categorical_column_with_hash_bucket("occupation", hash_bucket_size=1000)
age_buckets = fc.bucketized_column(numeric[0], boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65])
wide = [*vocab.values(), occupation, age_buckets,
        fc.crossed_column(["education", "occupation"], hash_bucket_size=1000),
        fc.crossed_column([age_buckets, "education", "occupation"], hash_bucket_size=1000)]
deep = [*numeric, *[fc.indicator_column(c) for c in vocab.values()], fc.embedding_column(occupation, dimension=8)]

def input_fn():
    return tf.data.Dataset.from_tensor_slices((data, labels)).repeat().batch(BATCH)

config = lib.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None, log_step_count_steps=100000,
                       save_summary_steps=100000)
estimator = lib.DNNLinearCombinedClassifier(model_dir=tempfile.mkdtemp(), linear_feature_columns=wide,
                                            dnn_feature_columns=deep, dnn_hidden_units=[100, 75, 50, 25],
                                            config=config)
estimator.train(input_fn, steps=5)
times = []
for steps in (N1, N2):
    started = time.perf_counter()
    estimator.train(input_fn, steps=steps)
    times.append(time.perf_counter() - started)
print("SPEED", json.dumps({"step_ms": 1000 * (times[1] - times[0]) / (N2 - N1), "seconds": times}))
if len(sys.argv) > 5:  # also write the training graph the session ran, and what each step fetched
    class Export(tf.compat.v1.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            graph = run_context.session.graph
            graph._unsafe_unfinalize()
            tf.compat.v1.train.export_meta_graph(sys.argv[5] + ".meta", graph=graph, clear_devices=True)
            graph.finalize()
            fetches = [t.name for t in run_context.original_args.fetches]
            iterators = [op.name for op in graph.get_operations() if op.type == "MakeIterator"]
            json.dump({"fetches": fetches, "iterators": iterators}, open(sys.argv[5] + ".json", "w"))
            run_context.request_stop()
    estimator.train(input_fn, steps=1, hooks=[Export()])
"""


def run(contender: str, python: str, batch: int, n1: int, n2: int, export: str | None = None) -> dict:
    """One contender's steady-state step time; `export`: also write its training graph there (.meta, .json)."""
    return run_speed_program(PROGRAM, python, [contender, str(batch), str(n1), str(n2), *([export] if export else [])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, nargs=2, default=(100, 2100), metavar=("N1", "N2"))
    parser.add_argument("--python215", default="/work/venv215/bin/python")
    args = parser.parse_args()
    pythons = {"tf215": args.python215, "ours": sys.executable}
    measures = {name: functools.partial(lambda n, p: run(n, p, args.batch, *args.steps)["step_ms"], name, python)
                for name, python in pythons.items()}
    figures = summary(taking_turns(measures, args.rounds, "ms/step", 2), higher_is_better=False)
    print(json.dumps({"step_ms": figures, "ours_vs_tf215_step_time": ratios(figures, "ours", "tf215")}, indent=1))


if __name__ == "__main__":
    main()
