"""Refusals lifted, as tf.estimator 2.15 allowed: TrainSpec(max_steps=None), features-only input, loss of shape [1].

Numbers are compared with what 2.15 computed for the same model_fns (tests/reference/compat_215.json).
"""

import numpy as np
import pytest

from tests import compat_cases as cases
from tests.compat_ours import OURS, REFERENCE, RTOL, assert_same_checkpoint


def test_train_spec_without_max_steps_trains_to_the_end_of_the_input_as_2_15(tmp_path):
    ours = cases.run_train_and_evaluate(OURS, str(tmp_path), max_steps=None)
    expected = REFERENCE["train_and_evaluate"]["None"]
    assert ours["global_step"] == expected["global_step"] == cases.STREAM_BATCHES
    assert ours["loss"] == pytest.approx(expected["loss"], rel=RTOL)
    np.testing.assert_allclose(ours["visits"], expected["visits"], rtol=RTOL)


@pytest.mark.parametrize("as_dict", [False, True], ids=["tensor", "dict"])
@pytest.mark.parametrize("estimator", ["tpu", "estimator"])
def test_features_only_input_trains_and_evaluates_with_labels_none_as_2_15(tmp_path, estimator, as_dict):
    ours = cases.run_features_only(OURS, str(tmp_path), estimator, as_dict)
    expected = REFERENCE["features_only"][f"{estimator}/{'dict' if as_dict else 'tensor'}"]
    assert ours["global_step"] == expected["global_step"]
    assert ours["loss"] == pytest.approx(expected["loss"], rel=RTOL)
    np.testing.assert_allclose(ours["w"], expected["w"], rtol=RTOL, atol=1e-6)


@pytest.mark.parametrize("shape", [[], [1], [1, 1]], ids=["scalar", "[1]", "[1,1]"])
def test_loss_with_one_element_trains_and_evaluates_as_a_scalar_as_2_15(tmp_path, shape):
    ours = cases.run_loss_shape(OURS, str(tmp_path), shape)
    expected = REFERENCE["loss_shape"][str(shape)]
    assert ours["loss"] == pytest.approx(expected["loss"], rel=RTOL)
    assert_same_checkpoint(ours["checkpoint"], expected["checkpoint"])
