"""Writes tf1_inputs_215.json: the batches tf.compat.v1.estimator.inputs' input_fns gave in TF 2.15.

Run from the repository root under the TF 2.15 + tensorflow-estimator 2.15 reference environment
(pandas installed there too):

    /work/venv215/bin/python tests/reference/make_tf1_inputs_215.py

Every case is unshuffled with one thread (2.15's only deterministic order). For each case: the
batches input_fn's tensors yielded until OutOfRangeError (or the first `take` of them for
num_epochs=None), as lists, with each tensor's dtype and static shape. tests/test_tf1_names.py
reads the same cases from tests/tf1_input_cases.py and compares estimators.inputs' Datasets.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tests import tf1_input_cases as cases  # noqa: E402

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf1_inputs_215.json")


def run(input_fn, take):
    with tf.Graph().as_default():
        result = input_fn()
        structure = {"static": tf.nest.map_structure(
            lambda t: {"dtype": t.dtype.name, "shape": t.shape.as_list()}, result)}
        batches = []
        with tf.compat.v1.train.MonitoredSession() as session:
            while not session.should_stop() and (take is None or len(batches) < take):
                try:
                    value = session.run(result)
                except tf.errors.OutOfRangeError:
                    break
                batches.append(tf.nest.map_structure(cases.as_json, value))
        structure["batches"] = batches
        return structure


def main():
    inputs = tf.compat.v1.estimator.inputs
    out = {}
    for name, (kind, kwargs, take) in cases.CASES.items():
        make = inputs.numpy_input_fn if kind == "numpy" else inputs.pandas_input_fn
        out[name] = run(make(**cases.arguments(kind, kwargs)), take)
    out["errors"] = {}
    for name, (kind, kwargs, _) in cases.ERRORS.items():
        make = inputs.numpy_input_fn if kind == "numpy" else inputs.pandas_input_fn
        stage = "make"
        try:
            input_fn = make(**cases.arguments(kind, kwargs))
            stage = "call"
            with tf.Graph().as_default():
                input_fn()
            out["errors"][name] = None
        except (TypeError, ValueError) as err:
            out["errors"][name] = {"stage": stage, "type": type(err).__name__, "message": str(err).splitlines()[0]}
    with open(OUTPUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", OUTPUT, np.__version__)


if __name__ == "__main__":
    main()
