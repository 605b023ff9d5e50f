"""Writes tests/fixtures/canned215/<case>/ (model_dirs of tf.estimator 2.15 canned estimators, 20 steps) and
tests/reference/canned_215.json (what 2.15 computed from them: evaluation, predictions, 20 more steps).

Run on TF 2.15: /work/venv215/bin/python tests/reference/make_canned_fixtures_215.py
Only the checkpoint and its `checkpoint` state file are kept (events and graphs dropped: fixtures stay small).
"""

import glob
import json
import os
import shutil
import sys

import numpy as np
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "canned215")
sys.path.insert(0, FIXTURES)
import cases  # noqa: E402

STEPS = 20
EVAL = {"n": 48, "seed": 1, "repeat": False}


def _numbers(values: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else float(v)) for k, v in values.items()}


def _predictions(est, name: str) -> dict:
    out = []
    for i, p in enumerate(est.predict(cases.case_input_fn(name, **EVAL))):
        if i == 4:
            break
        out.append({k: (v.astype(str).tolist() if v.dtype.kind in "OSU" else v.tolist()) for k, v in p.items()})
    return out


def main() -> None:
    reference = {"tensorflow": tf.__version__, "steps": STEPS, "cases": {}}
    for name in cases.CASES:
        model_dir = os.path.join(FIXTURES, name)
        shutil.rmtree(model_dir, ignore_errors=True)
        est = cases.build(tf.estimator, name, model_dir)
        est.train(cases.case_input_fn(name), steps=STEPS)
        names = {n: list(est.get_variable_value(n).shape) for n in est.get_variable_names()}
        entry = {"variables": names, "eval": _numbers(est.evaluate(cases.case_input_fn(name, **EVAL))),
                 "predictions": _predictions(est, name)}
        for path in glob.glob(os.path.join(model_dir, "*")):
            keep = os.path.basename(path) == "checkpoint" or ".ckpt-" in path and not path.endswith(".meta")
            if not keep:
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        scratch = os.path.join("/tmp", f"canned215_{name}")
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(model_dir, scratch)
        resumed = cases.build(tf.estimator, name, scratch)
        resumed.train(cases.case_input_fn(name), steps=STEPS)
        entry["eval_after_resume"] = _numbers(resumed.evaluate(cases.case_input_fn(name, **EVAL)))
        shutil.rmtree(scratch)
        reference["cases"][name] = entry
    with open(os.path.join(ROOT, "tests", "reference", "canned_215.json"), "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
