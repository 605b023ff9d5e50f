"""input_fn gets `mode`, `params`, `config` and `input_context` by name, as tf.estimator 2.15 passed them.

tests/compat_cases.run_input_fn_args runs input_fns declaring those names in several orders and forms
(functools.partial, a callable object, a default value, **kwargs, none at all) through train, evaluate and
predict, and records what each received; tests/reference/compat_215.json holds what 2.15 passed them.
"""

import numpy as np
import pytest
import tensorflow as tf

from tests import compat_cases as cases
from tests.compat_ours import OURS, REFERENCE, RTOL, assert_same_checkpoint


def _without(record: dict, key: str) -> dict:
    record = dict(record)
    if "params" in record:
        record["params"] = {k: v for k, v in record["params"].items() if k != key}
    return record


def test_estimator_input_fns_receive_what_2_15_passed(tmp_path):
    ours = cases.run_input_fn_args(OURS, str(tmp_path), "estimator")
    assert ours == REFERENCE["input_fn_args"]["estimator"]


def test_tpu_estimator_input_fns_receive_what_2_15_passed(tmp_path):
    ours = cases.run_input_fn_args(OURS, str(tmp_path), "tpu")
    # TPUEstimator's params also carry params['context']: a TPUContext (2.15's type), which is also this
    # pipeline's tf.distribute.InputContext.
    assert all(r["params"]["context"] == "TPUContext" for r in ours)
    assert [_without(r, "context") for r in ours] == REFERENCE["input_fn_args"]["tpu"]


@pytest.mark.parametrize("estimator", ["estimator", "tpu"])
def test_input_fn_choosing_its_data_by_mode_trains_on_the_training_set(tmp_path, estimator):
    ours = cases.run_mode_selected_input(OURS, str(tmp_path), estimator)
    expected = REFERENCE["mode_selected_input"][estimator]
    assert ours["loss"] == pytest.approx(expected["loss"], rel=RTOL)
    assert_same_checkpoint(ours["checkpoint"], expected["checkpoint"])


def test_tpu_estimator_input_fn_without_params_is_refused_as_2_15_did(tmp_path):
    estimator = cases.tpu_estimator(OURS, cases.input_fn_args_model_fn(OURS), str(tmp_path))
    with pytest.raises(ValueError, match="params"):
        estimator.train(lambda mode: tf.data.Dataset.from_tensors((np.zeros([16, 3], np.float32),)), max_steps=1)


def test_input_fn_with_an_argument_no_estimator_fills_is_named_in_the_error(tmp_path):
    def input_fn(params, data_dir):
        raise AssertionError("never called")

    estimator = cases.tpu_estimator(OURS, cases.input_fn_args_model_fn(OURS), str(tmp_path))
    with pytest.raises(ValueError, match="data_dir"):
        estimator.train(input_fn, max_steps=1)
