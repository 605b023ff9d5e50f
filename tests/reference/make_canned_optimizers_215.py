"""Writes canned_optimizers_215.json: what tf.estimator 2.15's canned estimators did with optimizers given as
instances (a renamed stock one, a user's subclass, one instance over two train() calls), and the 2.15 baseline's
batch-size checks.

Run on TF 2.15: /work/venv215/bin/python tests/reference/make_canned_optimizers_215.py
tests/test_canned_optimizers_215.py and tests/test_canned_baseline_215.py run the same programs (PROGRAMS, below)
on `estimators` and tf_keras's legacy optimizers, and compare. Each program is a BaselineRegressor on four fixed
examples from a zero bias, so its numbers are exact.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "canned_optimizers_215.json")


def _input_fn(features=None):
    def input_fn():
        given = features or {"x": [[1.0], [2.0], [3.0], [4.0]]}
        return ({k: tf.constant(v) for k, v in given.items()}, tf.constant([[1.0], [3.0], [2.0], [5.0]]))
    return input_fn


def _state(est) -> dict:
    """Every variable the model_dir holds, by name (floats as lists)."""
    return {name: np.asarray(est.get_variable_value(name)).tolist() for name in sorted(est.get_variable_names())}


def _error(err: Exception) -> dict:
    """The error's class, and its first line as a note (only the class is compared)."""
    return {"error": type(err).__name__, "message": str(err).splitlines()[0][:200]}


def renamed_instance(estimator, legacy, model_dir) -> dict:
    """A stock optimizer under its own name: its slots and hyperparameters are saved under that name."""
    est = estimator.BaselineRegressor(model_dir=model_dir, optimizer=legacy.Adagrad(0.5, name="my_adagrad"))
    est.train(_input_fn(), steps=3)
    return _state(est)


def user_subclass(estimator, legacy, model_dir) -> dict:
    """A user's own subclass of a stock Keras 2 optimizer trains as given."""
    class Momentary(legacy.SGD):
        """SGD with momentum fixed by the subclass."""

        def __init__(self, learning_rate=0.1, name="Momentary", **kwargs):
            super().__init__(learning_rate=learning_rate, momentum=0.5, name=name, **kwargs)

    est = estimator.BaselineRegressor(model_dir=model_dir, optimizer=Momentary(0.2))
    est.train(_input_fn(), steps=3)
    return _state(est)


def _two_trains(estimator, optimizer, model_dir) -> dict:
    est = estimator.BaselineRegressor(model_dir=model_dir, optimizer=optimizer)
    est.train(_input_fn(), steps=2)
    try:
        est.train(_input_fn(), steps=2)
    except Exception as err:  # 2.15: the instance's iterations are the first graph's global step
        return _error(err)
    return _state(est)


def instance_over_two_trains(estimator, legacy, model_dir) -> dict:
    """One Adam instance given to an estimator that trains twice (2.15 failed the second train())."""
    return _two_trains(estimator, legacy.Adam(0.1), model_dir)


def callable_over_two_trains(estimator, legacy, model_dir) -> dict:
    """The same optimizer given as a callable: a new Adam per train(), its slots restored from the checkpoint."""
    return _two_trains(estimator, lambda: legacy.Adam(0.1), model_dir)


def weighted_with_weight_first(estimator, legacy, model_dir) -> dict:
    """A weight column whose key sorts before the features (the batch size comes from the features)."""
    del legacy
    est = estimator.BaselineRegressor(model_dir=model_dir, weight_column="a_weight", optimizer="SGD")
    features = {"a_weight": [[1.0], [0.0], [2.0], [1.0]], "x": [[1.0], [2.0], [3.0], [4.0]]}
    est.train(_input_fn(features), steps=3)
    return _state(est)


def mismatched_batch_sizes(estimator, legacy, model_dir) -> dict:
    """Features whose first dimensions differ stop training."""
    del legacy
    est = estimator.BaselineRegressor(model_dir=model_dir, optimizer="SGD")
    features = {"x": [[1.0], [2.0], [3.0], [4.0]], "z": [[1.0], [2.0]]}
    try:
        est.train(_input_fn(features), steps=1)
    except Exception as err:
        return _error(err)
    return _state(est)


PROGRAMS = {f.__name__: f for f in (renamed_instance, user_subclass, instance_over_two_trains,
                                    callable_over_two_trains, weighted_with_weight_first, mismatched_batch_sizes)}


def main() -> None:
    import importlib.metadata
    import tempfile

    cases = {}
    for name, program in PROGRAMS.items():
        with tempfile.TemporaryDirectory() as model_dir:
            cases[name] = program(tf.estimator, tf.keras.optimizers.legacy, model_dir)
    reference = {"tensorflow": tf.__version__,
                 "tensorflow_estimator": importlib.metadata.version("tensorflow-estimator"),
                 "python": sys.version.split()[0], "cases": cases}
    with open(OUTPUT, "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
