"""Writes export_signatures_215.json: the serving signatures real tf.estimator 2.15 exports for tests/export_cases.py.

Run from the repository root under the TF 2.15 + tensorflow-estimator 2.15 reference environment:

    PYTHONPATH=. /work/ref215/bin/python tests/reference/make_export_signatures_215.py

tests/test_export_reference.py exports the same cases with `estimators` and compares.
"""

import json
import os
import sys
import tempfile
import types

import tensorflow as tf

from tests import export_cases

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_signatures_215.json")


def main() -> None:
    assert tf.__version__.startswith("2.15"), f"run under TF 2.15, not {tf.__version__}"
    api = types.SimpleNamespace(
        EstimatorSpec=tf.estimator.EstimatorSpec, ModeKeys=tf.estimator.ModeKeys, export=tf.estimator.export,
        Estimator=tf.estimator.Estimator,
        train_op=lambda loss: tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()),
    )
    listings = {}
    for name in export_cases.CASES:
        with tempfile.TemporaryDirectory() as scratch:
            export_dir = export_cases.export_case(api, name, os.path.join(scratch, "model"),
                                                  os.path.join(scratch, "export"))
            listings[name] = export_cases.signature_listing(export_dir)
    with open(OUTPUT, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": listings}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
