"""The training data stream across train() calls: continued while it has data, started over once it has ended.

tests/compat_cases.stream_model_fn trains `visits` on one-hot batch ids, so visits[k] = -(steps that saw
batch k): which batches every train() call took is observable. One pass over the data is E = 6 steps.
"""

import numpy as np
import pytest

from tests import compat_cases as cases
from tests.compat_ours import OURS, REFERENCE, RTOL

E = cases.STREAM_BATCHES


def _estimator(model_dir):
    return cases.tpu_estimator(OURS, cases.stream_model_fn(OURS), str(model_dir), batch=cases.STREAM_BATCH)


def _one_pass():
    x, y = cases.stream_data()
    return cases.one_pass_input_fn(x, y, drop_remainder=True)


def _visits(estimator) -> list[float]:
    return (-estimator.get_variable_value("stream/visits")).tolist()


def test_train_then_evaluate_three_times_on_one_pass_input_reaches_e_2e_3e_as_2_15(tmp_path):
    ours = cases.run_epochs(OURS, str(tmp_path))
    assert [r["global_step"] for r in ours] == [E, 2 * E, 3 * E]
    for got, expected in zip(ours, REFERENCE["epochs"], strict=True):
        assert got["global_step"] == expected["global_step"]
        assert got["loss"] == pytest.approx(expected["loss"], rel=RTOL)
        np.testing.assert_allclose(got["visits"], expected["visits"], rtol=RTOL)


def test_train_and_evaluate_with_one_pass_input_stops_at_its_end_before_max_steps_as_2_15(tmp_path):
    ours = cases.run_train_and_evaluate(OURS, str(tmp_path), max_steps=100)
    expected = REFERENCE["train_and_evaluate"]["100"]
    assert ours["global_step"] == expected["global_step"] == E
    assert ours["loss"] == pytest.approx(expected["loss"], rel=RTOL)
    np.testing.assert_allclose(ours["visits"], expected["visits"], rtol=RTOL)


def test_train_steps_continue_the_stream_then_start_over_once_it_has_ended(tmp_path):
    estimator = _estimator(tmp_path)
    input_fn = _one_pass()
    estimator.train(input_fn, steps=4)
    assert _visits(estimator) == [1, 1, 1, 1, 0, 0]  # batches 0-3
    estimator.train(input_fn, steps=4)  # batches 4, 5; the data ends and the call stops at step 6
    assert estimator.get_variable_value("global_step") == 6
    assert _visits(estimator) == [1, 1, 1, 1, 1, 1]
    estimator.train(input_fn, steps=4)  # input_fn's data starts over: batches 0-3
    assert estimator.get_variable_value("global_step") == 10
    assert _visits(estimator) == [2, 2, 2, 2, 1, 1]


def test_train_call_that_finds_the_stream_exhausted_starts_it_over(tmp_path):
    # Two calls of E/2 steps use up the data exactly; the third must start over, not end at once:
    # global steps 3, 6, 9 as 2.15 reached (2.15 re-read input_fn in every call).
    estimator = _estimator(tmp_path)
    input_fn = _one_pass()
    steps = []
    for _ in range(3):
        estimator.train(input_fn, steps=E // 2)
        steps.append(int(estimator.get_variable_value("global_step")))
    assert steps == [3, 6, 9]
    assert _visits(estimator) == [2, 2, 2, 1, 1, 1]


def test_a_new_estimator_resumes_the_stream_where_the_checkpoint_left_it(tmp_path):
    _estimator(tmp_path).train(_one_pass(), steps=4)
    resumed = _estimator(tmp_path)
    resumed.train(_one_pass(), steps=1)
    assert _visits(resumed) == [1, 1, 1, 1, 1, 0]  # batch 4, as one uninterrupted run would have taken


def test_a_new_estimator_starts_over_when_the_checkpoint_left_the_stream_at_its_end(tmp_path):
    _estimator(tmp_path).train(_one_pass(), steps=E)  # every batch once; the end itself was not reached
    resumed = _estimator(tmp_path)
    resumed.train(_one_pass(), steps=2)
    assert resumed.get_variable_value("global_step") == E + 2
    assert _visits(resumed) == [2, 2, 1, 1, 1, 1]
