"""The linear estimators give tf.estimator 2.15's numbers: trained weights and Ftrl slots, the `bias` and
`fraction_of_zero_weights` summaries, evaluation and predictions of small fixed programs, and
_compute_fraction_of_zero's value (NaN when there is nothing to count).

The programs are tests/reference/make_canned_linear_215.py's; its output under the real 2.15 (tensorflow-cpu
2.15.1, tensorflow-estimator 2.15.0) is tests/reference/canned_linear_215.json.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os

import numpy as np
import pytest

import estimators
from estimators.canned import linear

REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
with open(os.path.join(REFERENCE_DIR, "canned_linear_215.json")) as _f:
    REFERENCE = json.load(_f)
_spec = importlib.util.spec_from_file_location("make_canned_linear_215",
                                               os.path.join(REFERENCE_DIR, "make_canned_linear_215.py"))
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)

RTOL, ATOL = 1e-5, 1e-6


@functools.cache
def ours(name: str) -> dict:
    return programs.PROGRAMS[name](estimators)


def _close(actual, expected, what: str) -> None:
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol=RTOL,
                               atol=ATOL, err_msg=what)


def _assert_part(name: str, part: str) -> None:
    expected, actual = REFERENCE["programs"][name][part], ours(name)[part]
    assert sorted(actual) == sorted(expected), f"{name} {part}: keys differ"
    for key, value in expected.items():
        if isinstance(value, dict):
            assert sorted(actual[key]) == sorted(value), f"{name} {part}[{key}]: steps differ"
            _close([actual[key][s] for s in sorted(value)], [value[s] for s in sorted(value)], f"{part}[{key}]")
        else:
            _close(actual[key], value, f"{name} {part}[{key}]")


TRAINED = sorted(name for name in programs.PROGRAMS if not name.startswith("summaries_"))
SUMMARIES = sorted(name for name in programs.PROGRAMS if name.startswith("summaries_"))


@pytest.mark.parametrize("name", TRAINED)
def test_trained_variables_are_215s(name):
    _assert_part(name, "variables")


@pytest.mark.parametrize("name", TRAINED)
def test_evaluation_is_215s(name):
    _assert_part(name, "evaluate")


@pytest.mark.parametrize("name", TRAINED)
def test_prediction_is_215s(name):
    _assert_part(name, "predict")


@pytest.mark.parametrize("name", SUMMARIES)
def test_bias_and_fraction_of_zero_weights_summaries_are_215s(name):
    _assert_part(name, "summaries")


@pytest.mark.parametrize("case", sorted(programs.FRACTION_CASES))
def test_compute_fraction_of_zero_is_215s(case):
    expected = REFERENCE["fraction_of_zero"][case]
    actual = programs.fraction_of_zero(linear._compute_fraction_of_zero, case)
    if expected == "nan":
        assert actual == "nan"
    else:
        assert math.isclose(actual, expected, rel_tol=1e-6)


def test_compute_fraction_of_zero_of_nothing_is_a_value_error():
    with pytest.raises(ValueError):
        linear._compute_fraction_of_zero([])


def test_default_learning_rate_is_capped_ftrl_rate():
    assert linear.default_learning_rate(4) == 0.2
    assert math.isclose(linear.default_learning_rate(30), 1 / math.sqrt(30))


def test_a_tf1_feature_column_is_215s_value_error_at_train():
    from tensorflow.python.feature_column import feature_column as fc_v1  # a TF1-only column kind

    est = estimators.LinearRegressor([fc_v1._numeric_column("age")])
    with pytest.raises(ValueError, match="Received a feature column from TensorFlow v1"):
        est.train(programs._input_fn(regression=True), steps=1)


@pytest.mark.parametrize("make, message", [
    (lambda sdca: estimators.LinearClassifier(programs._age_lang(), n_classes=3, optimizer=sdca),
     "multi-class setting"),
    (lambda sdca: estimators.LinearRegressor(programs._age_lang(), label_dimension=2, optimizer=sdca),
     "one-dimensional label"),
    (lambda sdca: estimators.LinearClassifier(programs._age_lang(), optimizer=sdca, sparse_combiner="mean"),
     'sparse_combiner must be "sum"'),
])
def test_linear_sdca_misuse_is_215s_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make(estimators.experimental.LinearSDCA("example_id"))


@pytest.mark.parametrize("make", [
    lambda sdca: estimators.LinearClassifier(programs._age_lang(), optimizer=sdca),
    lambda sdca: estimators.LinearRegressor(programs._age_lang(), optimizer=sdca),
    lambda sdca: estimators.LinearEstimator(estimators.RegressionHead(), programs._age_lang(), optimizer=sdca),
])
def test_linear_sdca_is_refused_at_construction_not_trained_otherwise(make):
    with pytest.raises(NotImplementedError, match="LinearSDCA .* is not implemented"):
        make(estimators.experimental.LinearSDCA("example_id"))
