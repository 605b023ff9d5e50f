"""tests/tiers.py: which tests the fast tier leaves out, and the skips for missing optional packages."""

from __future__ import annotations

import os

from tests import tiers

TESTS = tiers.TESTS


def _module(tmp_path, text: str, name: str = "test_x.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_test_on_eight_replicas_is_slow(tmp_path):
    marks = tiers.marks_for(_module(tmp_path, "def test(): pass\n"), ("eight_replicas",))
    assert {"replicas8", "slow"} <= marks


def test_a_module_starting_other_pythons_is_slow(tmp_path):
    marks = tiers.marks_for(_module(tmp_path, "import subprocess\n"), ())
    assert {"subprocess", "slow"} <= marks


def test_the_215_comparisons_are_slow_and_mark_their_own_need_for_tf_keras():
    """tests/compat/test_programs.py marks only the programs that run with tf_keras (its own test checks which)."""
    path = os.path.join(TESTS, "compat", "test_programs.py")
    marks = tiers.marks_for(path, ())
    assert {"reference", "slow"} <= marks and "needs_tf_keras" not in marks


def test_a_module_training_canned_estimators_needs_tf_keras_and_one_using_heads_does_not(tmp_path):
    canned = "estimators.Linear" + "Classifier(columns)"  # spelt apart: this module itself needs no tf_keras
    assert "needs_tf_keras" in tiers.marks_for(_module(tmp_path, f"e = {canned}\n"), ())
    heads = _module(tmp_path, "h = estimators.MultiClassHead(3)\n", "test_heads.py")
    assert "needs_tf_keras" not in tiers.marks_for(heads, ())
    for name in ("test_canned_estimators.py", "test_canned_tf215_model_dirs.py"):
        assert "needs_tf_keras" in tiers.marks_for(os.path.join(TESTS, name), ())
    assert "needs_tf_keras" not in tiers.marks_for(os.path.join(TESTS, "test_canned_heads.py"), ())


def test_a_module_running_with_legacy_keras_needs_tf_keras(tmp_path):
    setting = "TF_USE_" + "LEGACY_KERAS"  # spelt apart: this module itself needs no tf_keras
    assert "needs_tf_keras" in tiers.marks_for(_module(tmp_path, f"os.environ[{setting!r}] = '1'\n"), ())


def test_a_module_training_a_model_is_slow(tmp_path):
    call = "e." + "train(input_fn, max_steps=2)"  # spelt apart: this module trains nothing
    marks = tiers.marks_for(_module(tmp_path, f"def test(e):\n    {call}\n"), ())
    assert {"trains", "slow"} <= marks


def test_a_module_of_plain_functions_is_fast(tmp_path):
    assert tiers.marks_for(_module(tmp_path, "def test(): pass\n"), ()) == set()


def test_a_module_using_tensorboards_summary_api_needs_tensorboard(tmp_path):
    api = "tf.summary." + "scalar"  # spelt apart: this module itself needs no tensorboard
    marks = tiers.marks_for(_module(tmp_path, f"{api}('x', 1.0)\n"), ())
    assert "needs_tensorboard" in marks


def test_a_missing_optional_package_is_a_skip_naming_the_install():
    reason = tiers.missing_package({"needs_tf_keras"}, lambda package: package != "tf_keras")
    assert reason.startswith("tf_keras is not installed: pip install --no-deps")


def test_installed_optional_packages_skip_nothing():
    assert tiers.missing_package({"needs_tf_keras", "needs_tensorboard"}, lambda package: True) is None


def test_a_module_comparing_with_215s_recorded_cases_is_slow(tmp_path):
    marks = tiers.marks_for(_module(tmp_path, "from tests import compat_" + "cases as cases\n"), ())
    assert {"reference", "slow"} <= marks


def test_a_module_using_the_worker_process_helper_is_slow(tmp_path):
    marks = tiers.marks_for(_module(tmp_path, "from tests.worker_" + "process import Worker\n"), ())
    assert {"subprocess", "slow"} <= marks


def test_a_smoke_test_that_trains_stays_in_the_fast_tier(tmp_path):
    call = "e." + "train(input_fn, max_steps=2)"
    marks = tiers.marks_for(_module(tmp_path, f"def test(e):\n    {call}\n"), (), smoke=True)
    assert "trains" in marks and "slow" not in marks
