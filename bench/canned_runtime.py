"""Is issue 19's canned step-time gap ours or TensorFlow's? One training graph, two TensorFlows, side by side.

bench/canned_speed.py compares tf.estimator 2.15 on TF 2.15 with this engine on TF 2.21. Here the graphs
themselves are written once (each estimator's own training graph and per-step fetches, as its session ran
them), then run by a bare tf.compat.v1.Session loop of the same fetches, in turns (ABAB...):
  g215@tf215   2.15's graph on TF 2.15         g215@tf221   2.15's graph on TF 2.21
  ours@tf221   this engine's graph on TF 2.21
g215@tf221 / g215@tf215 is what TensorFlow's version alone costs; ours@tf221 / g215@tf221 is what this
engine's graph costs beside 2.15's on the same TensorFlow.

    .venv/bin/python bench/canned_runtime.py --rounds 4
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile

if __package__ in (None, ""):  # run as a script: the repository root on the path, for `bench`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.canned_speed import run  # noqa: E402
from bench.speed_program import ratios, run_speed_program, summary, taking_turns  # noqa: E402

BARE = r"""
import json, sys, time
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
prefix, N1, N2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
info = json.load(open(prefix + ".json"))
graph = tf.Graph()
with graph.as_default():
    tf.compat.v1.train.import_meta_graph(prefix + ".meta")
    init = [tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer(),
            tf.compat.v1.tables_initializer()]
    fetches = [graph.as_graph_element(name) for name in info["fetches"]]
    iterators = [graph.get_operation_by_name(name) for name in info["iterators"]]
config = tf.compat.v1.ConfigProto(allow_soft_placement=True)  # the estimators' default session config
config.graph_options.rewrite_options.meta_optimizer_iterations = 1
with tf.compat.v1.Session(graph=graph, config=config) as session:
    session.run(init)
    session.run(iterators)
    for _ in range(5):
        session.run(fetches)
    times = []
    for steps in (N1, N2):
        started = time.perf_counter()
        for _ in range(steps):
            session.run(fetches)
        times.append(time.perf_counter() - started)
print("SPEED", json.dumps({"step_ms": 1000 * (times[1] - times[0]) / (N2 - N1), "seconds": times}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, nargs=2, default=(100, 2100), metavar=("N1", "N2"))
    parser.add_argument("--python215", default="/work/venv215/bin/python")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="canned_runtime_")
    graphs = {"g215": os.path.join(folder, "g215"), "ours": os.path.join(folder, "ours")}
    run("tf215", args.python215, args.batch, 5, 10, export=graphs["g215"])
    run("ours", sys.executable, args.batch, 5, 10, export=graphs["ours"])
    contenders = {"g215@tf215": (graphs["g215"], args.python215), "g215@tf221": (graphs["g215"], sys.executable),
                  "ours@tf221": (graphs["ours"], sys.executable)}

    def measure(prefix: str, python: str) -> float:
        return run_speed_program(BARE, python, [prefix, *map(str, args.steps)])["step_ms"]

    measures = {name: functools.partial(measure, *where) for name, where in contenders.items()}
    figures = summary(taking_turns(measures, args.rounds, "ms/step", 3), higher_is_better=False)
    print(json.dumps({"step_ms": figures,
                      "tensorflow_2_21_vs_2_15_same_graph": ratios(figures, "g215@tf221", "g215@tf215"),
                      "our_graph_vs_2_15_graph_on_tf_2_21": ratios(figures, "ours@tf221", "g215@tf221")}, indent=1))


if __name__ == "__main__":
    main()
