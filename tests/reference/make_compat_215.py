"""Writes compat_215.json: what the real tf.estimator 2.15 computed for the runs in tests/compat_cases.py.

Run from the repository root under the TF 2.15 + tensorflow-estimator 2.15 reference environment (~1 min):

    PYTHONPATH=. /work/ref215/bin/python tests/reference/make_compat_215.py

tests/test_compat_*.py run the same cases with `estimators` and compare. 2.15 runs them with
TPUEstimator(use_tpu=False) (one replica, one step per session.run whatever iterations_per_loop
says) and bare tf.compat.v1 optimizers: its CrossShardOptimizer has no CPU kernel.
"""

import json
import os
import sys
import tempfile
import types

import tensorflow as tf

from tests import compat_cases as cases

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compat_215.json")
V1_TPU = tf.compat.v1.estimator.tpu


def reference_api() -> types.SimpleNamespace:
    return types.SimpleNamespace(
        Estimator=tf.estimator.Estimator, TPUEstimator=V1_TPU.TPUEstimator, RunConfig=V1_TPU.RunConfig,
        TPUConfig=V1_TPU.TPUConfig, EstimatorSpec=tf.estimator.EstimatorSpec, TPUEstimatorSpec=V1_TPU.TPUEstimatorSpec,
        ModeKeys=tf.estimator.ModeKeys, CrossShardOptimizer=None, TrainSpec=tf.estimator.TrainSpec,
        EvalSpec=tf.estimator.EvalSpec, train_and_evaluate=tf.estimator.train_and_evaluate,
    )


def in_fresh_dir(run, *args, **kwargs):
    with tempfile.TemporaryDirectory() as scratch:
        return run(reference_api(), os.path.join(scratch, "model"), *args, **kwargs)


def main() -> None:
    assert tf.__version__.startswith("2.15"), f"run under TF 2.15, not {tf.__version__}"
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    out = {"tensorflow": tf.__version__}
    out["optimizers"] = {name: in_fresh_dir(cases.run_optimizer, name) for name in cases.V1_OPTIMIZERS}
    out["schedules"] = {
        f"{schedule}/minimize/{iterations}": in_fresh_dir(cases.run_schedule, schedule, "minimize", iterations)
        for schedule in cases.SCHEDULES for iterations in (1, 7)
    }
    for update in ("assign_add", "get_or_create"):
        for iterations in (1, 7):
            out["schedules"][f"exponential_decay/{update}/{iterations}"] = in_fresh_dir(
                cases.run_schedule, "exponential_decay", update, iterations)
    out["global_step_probe"] = in_fresh_dir(cases.run_global_step_probe)
    out["every_mode_train_op"] = {update: in_fresh_dir(cases.run_every_mode_train_op, update)
                                  for update in ("gradient_descent", "adam", "handwritten")}
    out["epochs"] = in_fresh_dir(cases.run_epochs)
    out["train_and_evaluate"] = {str(max_steps): in_fresh_dir(cases.run_train_and_evaluate, max_steps)
                                 for max_steps in (None, 100)}
    out["features_only"] = {f"{estimator}/{'dict' if as_dict else 'tensor'}": in_fresh_dir(
        cases.run_features_only, estimator, as_dict) for estimator in ("tpu", "estimator") for as_dict in (False, True)}
    out["loss_shape"] = {str(shape): in_fresh_dir(cases.run_loss_shape, shape) for shape in ([], [1], [1, 1])}
    out["collections"] = in_fresh_dir(cases.run_collections)
    out["input_fn_args"] = {estimator: in_fresh_dir(cases.run_input_fn_args, estimator)
                            for estimator in ("estimator", "tpu")}
    out["mode_selected_input"] = {estimator: in_fresh_dir(cases.run_mode_selected_input, estimator)
                                  for estimator in ("estimator", "tpu")}
    out["model_fn_params"] = {estimator: in_fresh_dir(cases.run_model_fn_params, estimator)
                              for estimator in ("estimator", "tpu")}
    with open(OUTPUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
