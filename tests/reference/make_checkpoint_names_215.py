"""Writes what real tf.estimator 2.15 did with the model_fns of tests/checkpoint_names_cases.py.

Run from the repository root under the TF 2.15 + tensorflow-estimator 2.15 reference environment:

    PYTHONPATH=. /work/ref215/bin/python tests/reference/make_checkpoint_names_215.py

- tests/reference/checkpoint_names_215.json: for each case, the checkpoint after train(max_steps=1) as
  [name, shape, dtype], by name.
- tests/fixtures/names215/<case>/model_dir: train(max_steps=2), checkpoint every 2 steps, 1 kept (only the
  `checkpoint` state file and model.ckpt-2's .index/.data are kept: graph.pbtxt, events and .meta are not needed).
- tests/fixtures/names215/resume4.npz: `<case>/<variable>` after 2.15 resumed a copy of that model_dir with
  train(max_steps=4) (steps 3 and 4 saw batches 0 and 1: 2.15 called input_fn afresh at every train()).
tests/test_checkpoint_names.py and tests/test_tf215_model_dirs.py use them.
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf

from tests import checkpoint_names_cases as cases

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = os.path.join(HERE, "checkpoint_names_215.json")
MODEL_DIRS = os.path.join(os.path.dirname(HERE), "fixtures", "names215")
KEPT = ("checkpoint", "model.ckpt-2.index", "model.ckpt-2.data-00000-of-00001")


def _estimator(name: str, model_dir: str) -> tf.estimator.Estimator:
    config = tf.estimator.RunConfig(save_checkpoints_steps=2, keep_checkpoint_max=1)
    model_fn = cases.CASES[name](tf.estimator.EstimatorSpec, tf.estimator.ModeKeys.TRAIN)
    return tf.estimator.Estimator(model_fn, model_dir=model_dir, config=config)


def main() -> None:
    assert tf.__version__.startswith("2.15"), f"run under TF 2.15, not {tf.__version__}"
    listings, resumed = {}, {}
    shutil.rmtree(MODEL_DIRS, ignore_errors=True)
    for name in cases.CASES:
        with tempfile.TemporaryDirectory() as scratch:
            estimator = _estimator(name, os.path.join(scratch, "one"))
            estimator.train(cases.input_fn, max_steps=1)
            listings[name] = cases.listing(estimator.latest_checkpoint())
            full = os.path.join(scratch, "two")
            _estimator(name, full).train(cases.input_fn, max_steps=2)
            kept = os.path.join(MODEL_DIRS, name, "model_dir")
            os.makedirs(kept)
            for file_name in KEPT:
                shutil.copy(os.path.join(full, file_name), kept)
            again = os.path.join(scratch, "again")
            shutil.copytree(kept, again)
            estimator = _estimator(name, again)
            estimator.train(cases.input_fn, max_steps=4)
            for variable in estimator.get_variable_names():
                resumed[f"{name}/{variable}"] = estimator.get_variable_value(variable)
    with open(NAMES, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": listings}, f, indent=1, sort_keys=True)
        f.write("\n")
    np.savez_compressed(os.path.join(MODEL_DIRS, "resume4.npz"), **resumed)
    print(f"wrote {NAMES} and {MODEL_DIRS}", file=sys.stderr)


if __name__ == "__main__":
    main()
