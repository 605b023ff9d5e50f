"""IterationsPerLoop: how many steps the next loop runs, for a count or a duration such as "30s"."""

from __future__ import annotations

import math

from estimators.training.iterations import IterationsPerLoop


def test_a_count_runs_that_many_steps_capped_by_what_remains():
    loops = IterationsPerLoop(100)
    assert (loops.next(math.inf), loops.next(40)) == (100, 40)


def test_a_duration_starts_with_one_step():
    assert IterationsPerLoop("30s").next(math.inf) == 1


def test_a_duration_fits_the_steps_the_measured_step_time_allows():
    loops = IterationsPerLoop("30s")
    loops.record(10, 20.0)  # 2 s a step
    assert loops.next(math.inf) == 15


def test_steps_getting_slower_shrink_the_next_loop_at_once():
    """The recent mean lags a machine getting busier: the latest, slower loop sizes the next one."""
    loops = IterationsPerLoop("30s")
    for _ in range(5):
        loops.record(10, 20.0)  # 2 s a step
    loops.record(10, 40.0)  # now 4 s a step (mean 2.33 s)
    assert loops.next(math.inf) == 7


def test_steps_getting_faster_grow_the_loop_with_the_mean():
    loops = IterationsPerLoop("30s")
    loops.record(10, 40.0)  # 4 s a step
    loops.record(10, 20.0)  # 2 s a step: mean 3 s
    assert loops.next(math.inf) == 10


def test_the_one_step_probe_gives_way_to_the_first_timed_loop():
    """A first step taking 6 s (warm-up) must not keep later loops short when steps take 1 s."""
    loops = IterationsPerLoop("30s")
    loops.record(1, 6.0)
    assert loops.next(math.inf) == 2  # half the duration on the probe's word: 15 s / 6 s
    loops.record(2, 2.0)
    assert loops.next(math.inf) == 30


def test_a_probe_faster_than_the_steps_after_it_still_prints_within_the_duration():
    """Measured on a busy machine: a 0.29 s probe step, then 0.37 s steps. Sized on the probe alone the first
    loop ran 103 steps (38 s of silence for "30s"); aiming at half the duration it runs 51 (about 19 s)."""
    loops = IterationsPerLoop("30s")
    loops.record(1, 0.29)
    steps = loops.next(math.inf)
    assert steps == 51 and steps * 0.37 < 30
