"""TPUStopAtStepHook: writes each loop's step count into the graph's loop variable and stops at the last step."""

import pytest
import tensorflow as tf

from estimators.run_config import IterationsPerLoop
from estimators.tpu.iteration_count import IterationCountEstimator
from estimators.tpu.stop_hook import TPUStopAtStepHook, iterations_per_loop_variable


class _RunContext:
    def __init__(self, session):
        self.session = session
        self.stopped = False

    def request_stop(self):
        self.stopped = True


def _session_with_global_step(graph):
    with graph.as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
    return tf.compat.v1.Session(graph=graph), step


def test_it_needs_exactly_one_of_num_steps_and_final_step():
    counter = IterationsPerLoop(4, "count")
    with pytest.raises(ValueError, match="One of"):
        TPUStopAtStepHook(counter)
    with pytest.raises(ValueError, match="Only one of"):
        TPUStopAtStepHook(counter, num_steps=1, final_step=2)


def test_an_unknown_unit_is_refused():
    with pytest.raises(ValueError, match="unit"):
        TPUStopAtStepHook(IterationsPerLoop(4, "secs"), num_steps=1)


def test_a_time_budget_uses_an_iteration_count_estimator():
    hook = TPUStopAtStepHook(IterationsPerLoop(30, "seconds"), num_steps=1)
    assert isinstance(hook._iteration_count_estimator, IterationCountEstimator)
    assert TPUStopAtStepHook(IterationsPerLoop(4, "count"), num_steps=1)._iteration_count_estimator is None


def test_loops_are_the_configured_count_then_the_remainder_then_stop():
    graph = tf.Graph()
    session, step = _session_with_global_step(graph)
    with graph.as_default():
        hook = TPUStopAtStepHook(IterationsPerLoop(4, "count"), num_steps=10)
        hook.begin()
        loop_var = iterations_per_loop_variable()
        session.run(tf.compat.v1.global_variables_initializer())
        hook.after_create_session(session, None)
        assert session.run(loop_var) == 4
        context = _RunContext(session)
        step.load(8, session=session)
        hook.after_run(context, None)
        assert session.run(loop_var) == 2 and not context.stopped
        step.load(10, session=session)
        hook.after_run(context, None)
        assert context.stopped
