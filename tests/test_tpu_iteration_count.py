"""IterationCountEstimator: how many steps fit in a time budget, from the recent loops' timings."""

import pytest

from estimators.tpu.iteration_count import IterationCountEstimator


def test_without_samples_it_answers_one_step():
    assert IterationCountEstimator().get(30) == 1


def test_a_sample_without_time_or_steps_is_dropped():
    estimator = IterationCountEstimator()
    estimator.update(0, 5)
    estimator.update(2, 0)
    assert estimator.get(30) == 1


def test_the_budget_is_divided_by_the_mean_step_time():
    estimator = IterationCountEstimator()
    estimator.update(2.0, 4)  # 0.5 s a step
    assert estimator.get(10) == 20


def test_the_window_keeps_only_the_last_capacity_loops():
    estimator = IterationCountEstimator(capacity=2)
    estimator.update(10.0, 1)
    estimator.update(1.0, 1)
    estimator.update(1.0, 1)
    assert estimator._mean_step_time_secs() == 1.0


def test_a_settled_loop_on_budget_keeps_its_size():
    estimator = IterationCountEstimator(capacity=2)
    estimator.update(10.0, 10)
    assert estimator.get(10.4) == 10  # not settled yet: the projection, 10.4 steps of 1 s
    estimator.update(10.0, 8)
    estimator.update(10.0, 8)  # three loops > the window, same step time: settled, and on budget
    assert estimator.get(10.4) == 10  # kept (a projection would say 10.4 / 1.25 = 8)


@pytest.mark.parametrize("budget", [0, -1])
def test_a_budget_must_be_positive(budget):
    with pytest.raises(ValueError, match="total_secs"):
        IterationCountEstimator().get(budget)


def test_capacity_must_be_positive():
    with pytest.raises(ValueError, match="capacity"):
        IterationCountEstimator(capacity=0)
