"""Writes checkpoint_names_215.json: the names real tf.estimator 2.15 wrote for tests/checkpoint_names_cases.py.

Run from the repository root under the TF 2.15 + tensorflow-estimator 2.15 reference environment:

    PYTHONPATH=. /work/ref215/bin/python tests/reference/make_checkpoint_names_215.py

Each case trains one step (train(max_steps=1)) and lists the newest checkpoint: [name, shape, dtype], by name.
tests/test_checkpoint_names.py trains the same model_fns with `estimators` and compares.
"""

import json
import os
import sys
import tempfile

import tensorflow as tf

from tests import checkpoint_names_cases as cases

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoint_names_215.json")


def main() -> None:
    assert tf.__version__.startswith("2.15"), f"run under TF 2.15, not {tf.__version__}"
    listings = {}
    for name, make in cases.CASES.items():
        with tempfile.TemporaryDirectory() as model_dir:
            model_fn = make(tf.estimator.EstimatorSpec, tf.estimator.ModeKeys.TRAIN)
            estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir)
            estimator.train(cases.input_fn, max_steps=1)
            listings[name] = cases.listing(estimator.latest_checkpoint())
    with open(OUTPUT, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": listings}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
