"""Model_dirs written by tf.estimator 2.15's canned estimators evaluate, predict and keep training here.

tests/fixtures/canned215/<case> holds 2.15's checkpoint after 20 steps (tests/reference/make_canned_fixtures_215.py,
run on TF 2.15, also wrote canned_215.json: its evaluation, predictions and the evaluation after 20 more steps).
The same cases.py builds the estimators here from `estimators` instead of `tf.estimator`. Every variable is
restored from the checkpoint (none is initialised here), so evaluation and predictions must agree to float32
rounding; 20 more steps of Adagrad/FTRL over the same batches to 1e-4.
"""

import json
import os
import shutil
import sys

import numpy as np
import pytest

import estimators

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "canned215")
sys.path.insert(0, FIXTURES)
import cases  # noqa: E402

with open(os.path.join(ROOT, "tests", "reference", "canned_215.json")) as _f:
    REFERENCE = json.load(_f)["cases"]
EVAL = {"n": 48, "seed": 1, "repeat": False}


@pytest.fixture
def model_dir(request, tmp_path):
    """A copy of the case's 2.15 model_dir (tests never write into the fixture)."""
    target = tmp_path / request.param
    shutil.copytree(os.path.join(FIXTURES, request.param), target)
    return request.param, str(target)


def _close(ours: dict, theirs: dict, rtol: float) -> None:
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(np.asarray(ours[key], np.float64), value, rtol=rtol, atol=rtol, err_msg=key)


@pytest.mark.parametrize("model_dir", cases.CASES, indirect=True)
def test_checkpoint_names_and_shapes_are_2_15s(model_dir):
    name, path = model_dir
    est = cases.build(estimators, name, path)
    ours = {n: list(est.get_variable_value(n).shape) for n in est.get_variable_names()}
    assert ours == REFERENCE[name]["variables"]


@pytest.mark.parametrize("model_dir", cases.CASES, indirect=True)
def test_evaluates_a_2_15_model_dir_to_2_15s_metrics(model_dir):
    name, path = model_dir
    results = cases.build(estimators, name, path).evaluate(cases.case_input_fn(name, **EVAL))
    _close(results, REFERENCE[name]["eval"], rtol=1e-5)


@pytest.mark.parametrize("model_dir", cases.CASES, indirect=True)
def test_predicts_from_a_2_15_model_dir_as_2_15(model_dir):
    name, path = model_dir
    predictions = cases.build(estimators, name, path).predict(cases.case_input_fn(name, **EVAL))
    expected_all = REFERENCE[name]["predictions"]
    ours_all = [p for _, p in zip(range(len(expected_all)), predictions, strict=False)]
    assert len(ours_all) == len(expected_all)
    for expected, ours in zip(expected_all, ours_all, strict=True):
        assert sorted(ours) == sorted(expected)
        for key, value in expected.items():
            if isinstance(value[0], str):
                assert [v.decode() for v in ours[key]] == value, key
            else:
                np.testing.assert_allclose(ours[key], value, rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.parametrize("model_dir", cases.CASES, indirect=True)
def test_continues_training_a_2_15_model_dir_as_2_15_did(model_dir):
    name, path = model_dir
    est = cases.build(estimators, name, path)
    est.train(cases.case_input_fn(name), steps=20)
    results = est.evaluate(cases.case_input_fn(name, **EVAL))
    assert results["global_step"] == 40
    _close(results, REFERENCE[name]["eval_after_resume"], rtol=1e-4)
