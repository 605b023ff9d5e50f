"""The heads give tf.estimator 2.15's numbers: the EVAL spec's loss and Keras metrics (AUCs, precision, recall,
accuracy baseline, means, per-threshold and per-class metrics) accumulated over two weighted batches, for every
head, and the training loss under each reduction with [batch, 2, 1] logits.

The programs are tests/reference/make_canned_heads_215.py's; its output under the real 2.15 (tensorflow-cpu
2.15.1, tensorflow-estimator 2.15.0) is tests/reference/canned_heads_215.json.
"""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import estimators

REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
with open(os.path.join(REFERENCE_DIR, "canned_heads_215.json")) as _f:
    REFERENCE = json.load(_f)
_spec = importlib.util.spec_from_file_location("make_canned_heads_215",
                                               os.path.join(REFERENCE_DIR, "make_canned_heads_215.py"))
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)

RTOL, ATOL = 1e-5, 1e-6


def _assert_matches_2_15(name: str) -> None:
    expected, actual = REFERENCE["programs"][name], programs.PROGRAMS[name](estimators)
    assert sorted(actual["metrics"]) == sorted(expected["metrics"]), f"{name}: metric keys differ"
    for key, value in expected["metrics"].items():
        np.testing.assert_allclose(actual["metrics"][key], value, rtol=RTOL, atol=ATOL, err_msg=f"{name}: {key}")
    np.testing.assert_allclose(actual["losses"], expected["losses"], rtol=RTOL, atol=ATOL, err_msg=f"{name}: loss")


def test_binary_head_keras_metrics_auc_thresholds_and_baseline_are_2_15s():
    _assert_matches_2_15("binary_metrics")


def test_binary_head_with_vocabulary_and_name_gives_2_15s_metrics():
    _assert_matches_2_15("binary_vocabulary_unweighted")


def test_multi_class_head_weighted_loss_and_accuracy_are_2_15s():
    _assert_matches_2_15("multi_class_metrics")


def test_multi_label_head_aucs_threshold_and_per_class_metrics_are_2_15s():
    _assert_matches_2_15("multi_label_metrics")


def test_regression_head_with_per_logit_weights_gives_2_15s_means():
    _assert_matches_2_15("regression_per_logit_weights")


def test_poisson_regression_head_gives_2_15s_loss_and_means():
    _assert_matches_2_15("poisson_regression")


def test_logistic_regression_head_gives_2_15s_loss_and_means():
    _assert_matches_2_15("logistic_regression")


def test_multi_head_weighted_sum_of_losses_and_merged_metrics_are_2_15s():
    _assert_matches_2_15("multi_head")


def test_loss_reductions_over_sequence_shaped_logits_are_2_15s():
    _assert_matches_2_15("reductions")


def test_the_reference_was_written_by_tensorflow_2_15():
    assert REFERENCE["versions"]["tensorflow"].startswith("2.15")
    assert set(REFERENCE["programs"]) == set(programs.PROGRAMS)


@pytest.mark.parametrize("reduction", ["none", "invalid_loss_reduction"])
def test_a_reduction_that_is_not_one_number_is_refused_with_2_15s_message(reduction):
    with pytest.raises(ValueError, match=f"Invalid loss_reduction: {reduction}"):
        estimators.BinaryClassHead(loss_reduction=reduction)
