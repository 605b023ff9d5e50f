"""The engine's hooks also run in a tf.compat.v1 MonitoredSession (begin() without a step), as 2.15's did."""

import tensorflow as tf

from estimators import LoggingTensorHook, StopAtStepHook
from estimators.experimental import early_stopping
from estimators.training.eval_summaries import write_dict_to_summary


def _run_steps(hook, steps, fetch=None):
    """Runs `steps` session runs of a graph whose run increments the global step; returns should_stop after each."""
    stops = []
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.assign_add(step, 1)
        with tf.compat.v1.train.SingularMonitoredSession(hooks=[hook]) as session:
            for _ in range(steps):
                if session.should_stop():
                    break
                session.run(train_op)
                stops.append(session.should_stop())
    return stops


def test_stop_at_step_hook_stops_a_monitored_session_at_last_step():
    assert _run_steps(StopAtStepHook(last_step=3), 5) == [False, False, True]


def test_logging_tensor_hook_logs_in_a_monitored_session(caplog):
    with tf.Graph().as_default():
        tensor = tf.constant(42.0, name="answer")
        hook = LoggingTensorHook({"answer": tensor}, every_n_iter=1)
        no_op = tf.no_op()
        with tf.compat.v1.train.SingularMonitoredSession(hooks=[hook]) as session:
            with caplog.at_level("INFO", logger="tensorflow"):  # whatever level earlier code left it at
                session.run(no_op)
    assert "answer = 42.0" in caplog.text


def test_an_early_stopping_hook_requests_the_stop_of_a_monitored_session():
    hook = early_stopping._StopOnPredicateHook(lambda: True, run_every_secs=0, run_every_steps=None)
    assert _run_steps(hook, 3) == [True]


def test_written_eval_metrics_are_read_back_by_step(tmp_path):
    write_dict_to_summary(str(tmp_path), {"loss": 0.5, "global_step": 10}, 10)
    write_dict_to_summary(str(tmp_path), {"loss": 0.25, "global_step": 20}, 20)
    assert early_stopping.read_eval_metrics(str(tmp_path)) == {10: {"loss": 0.5}, 20: {"loss": 0.25}}
