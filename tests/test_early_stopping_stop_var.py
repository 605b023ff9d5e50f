"""Early stopping in a tf.compat.v1 session: the chief's hook sets the graph's stop flag, workers' hooks read it."""

import tensorflow as tf

from estimators.experimental import early_stopping


def _run(hooks, set_stop=False):
    """(should_stop, stop variable) after one run (two when the stop variable is set in between)."""
    stop_var = early_stopping._get_or_create_stop_var()
    no_op, assign = tf.no_op(), tf.compat.v1.assign(stop_var, True)
    with tf.compat.v1.train.SingularMonitoredSession(hooks=hooks) as session:
        session.run(no_op)
        if set_stop:
            session.run(assign)
            if not session.should_stop():
                session.run(no_op)
        return session.should_stop(), session.raw_session().run(stop_var)


def test_a_stop_sets_the_stop_variable():
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        assert _run([early_stopping._StopOnPredicateHook(lambda: True, run_every_secs=0)]) == (True, True)


def test_no_stop_leaves_it_false():
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        assert _run([early_stopping._StopOnPredicateHook(lambda: False, run_every_secs=0)]) == (False, False)


def test_a_worker_stops_once_the_variable_is_set():
    with tf.Graph().as_default():
        stopped, _ = _run([early_stopping._CheckForStoppingHook()], set_stop=True)
        assert stopped
