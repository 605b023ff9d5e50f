"""This project's side of tests/compat_cases.py: its API namespace, 2.15's numbers, and comparisons."""

import json
import os
import types

import numpy as np

import estimators
from tests import compat_cases as cases

OURS = types.SimpleNamespace(
    Estimator=estimators.Estimator, TPUEstimator=estimators.TPUEstimator, RunConfig=estimators.RunConfig,
    TPUConfig=estimators.TPUConfig, EstimatorSpec=estimators.EstimatorSpec,
    TPUEstimatorSpec=estimators.TPUEstimatorSpec, ModeKeys=estimators.ModeKeys,
    CrossShardOptimizer=estimators.CrossShardOptimizer, TrainSpec=estimators.TrainSpec,
    EvalSpec=estimators.EvalSpec, train_and_evaluate=estimators.train_and_evaluate,
)

_REFERENCE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "compat_215.json")
with open(_REFERENCE_FILE) as _f:
    REFERENCE = json.load(_f)  # what tf.estimator 2.15 computed (tests/reference/make_compat_215.py)

RTOL, ATOL = 1e-5, 1e-6


def assert_same_checkpoint(ours: dict, expected: dict, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Same variable names (this project's engine-only keys aside) and values to rtol/atol."""
    ours = {k: v for k, v in ours.items() if k not in cases.ENGINE_ONLY_KEYS}
    expected = {k: v for k, v in expected.items() if k not in cases.ENGINE_ONLY_KEYS}
    assert sorted(ours) == sorted(expected)
    for name in expected:
        np.testing.assert_allclose(ours[name], expected[name], rtol=rtol, atol=atol, err_msg=name)
