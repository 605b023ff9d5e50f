"""Optimizers given to canned estimators as instances, pinned to tf.estimator 2.15's own numbers.

Each test runs a program of tests/reference/make_canned_optimizers_215.py (a BaselineRegressor on four fixed
examples) on `estimators` with tf_keras's legacy optimizers, and compares every saved variable with what 2.15
saved for the same program (tests/reference/canned_optimizers_215.json, written under /work/venv215).
"""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

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


def assert_same_state(actual: dict, expected: dict) -> None:
    """The same variable names; their values to 1e-5 (relative)."""
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_renamed_stock_optimizer_saves_its_slots_under_its_own_name(tmp_path):
    assert_same_state(ours("renamed_instance", str(tmp_path)), REFERENCE["renamed_instance"])


def test_a_users_subclass_of_a_keras_2_optimizer_trains_as_given(tmp_path):
    assert_same_state(ours("user_subclass", str(tmp_path)), REFERENCE["user_subclass"])


def test_a_callable_gives_a_new_optimizer_per_train_call_restored_from_the_checkpoint(tmp_path):
    assert_same_state(ours("callable_over_two_trains", str(tmp_path)), REFERENCE["callable_over_two_trains"])


def test_one_instance_over_two_train_calls_continues_as_the_callable_does(tmp_path):
    # Deliberate: 2.15 failed the second train() (its instance's step counter was the first graph's global
    # step); here the second graph trains a copy of the instance, which is what 2.15's callable form gave.
    assert REFERENCE["instance_over_two_trains"]["error"] == "RuntimeError"
    assert_same_state(ours("instance_over_two_trains", str(tmp_path)), REFERENCE["callable_over_two_trains"])


def test_a_tf_keras_non_legacy_optimizer_is_refused_as_2_15s_graphs_did():
    import tf_keras
    with pytest.raises(ValueError, match=r"Please set your optimizer.*tf\.keras\.optimizers\.legacy\.Adam"):
        estimators.BaselineRegressor(optimizer=tf_keras.optimizers.Adam(0.1))


def test_a_keras_3_optimizer_trains_as_its_keras_2_twin(tmp_path):
    import keras
    est = estimators.BaselineRegressor(model_dir=str(tmp_path), optimizer=keras.optimizers.Adagrad(0.5))
    est.train(programs._input_fn(), steps=3)
    expected = REFERENCE["renamed_instance"]
    assert est.get_variable_value("baseline/bias") == pytest.approx(expected["baseline/bias"], rel=1e-5)
    assert "training/Adagrad/baseline/bias/accumulator" in est.get_variable_names()


def test_optimizer_names_are_2_15s_case_sensitive_ones():
    with pytest.raises(ValueError, match=r"Unsupported optimizer name: rmsprop\. Supported names are: "
                                         r"\('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'\)"):
        estimators.BaselineRegressor(optimizer="rmsprop")
    estimators.BaselineRegressor(optimizer="RMSProp")
