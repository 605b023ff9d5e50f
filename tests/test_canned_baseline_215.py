"""The baseline's batch size and its checks, pinned to tf.estimator 2.15's own results.

Each test runs a program of tests/reference/make_canned_optimizers_215.py on `estimators` and compares with what
2.15 gave (tests/reference/canned_optimizers_215.json, written under /work/venv215).
"""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import estimators

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("make_canned_optimizers_215",
                                               os.path.join(HERE, "reference", "make_canned_optimizers_215.py"))
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)
with open(os.path.join(HERE, "reference", "canned_optimizers_215.json")) as _f:
    REFERENCE = json.load(_f)["cases"]


def ours(name: str, model_dir: str) -> dict:
    import tf_keras
    return programs.PROGRAMS[name](estimators, tf_keras.optimizers.legacy, model_dir)


def test_a_weight_column_sorting_first_trains_as_in_2_15(tmp_path):
    actual, expected = ours("weighted_with_weight_first", str(tmp_path)), REFERENCE["weighted_with_weight_first"]
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_features_with_different_batch_sizes_stop_training(tmp_path):
    assert REFERENCE["mismatched_batch_sizes"]["error"] == "InvalidArgumentError"
    with pytest.raises(tf.errors.InvalidArgumentError):
        est = estimators.BaselineRegressor(model_dir=str(tmp_path), optimizer="SGD")
        est.train(programs._input_fn({"x": [[1.0], [2.0], [3.0], [4.0]], "z": [[1.0], [2.0]]}), steps=1)

