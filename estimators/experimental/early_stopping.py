"""Early stopping as tf.estimator 2.15 did it: a training hook that reads evaluate()'s event files.

evaluate() writes each evaluation's metrics to model_dir/eval (eval_<name>) at the evaluated
global step; these hooks read every evaluation on record there (from this run and earlier ones)
and ask training to stop when a metric crossed a threshold or stopped improving. As in 2.15 the
check runs at most every `run_every_secs` seconds or `run_every_steps` steps (the first check at
the first chance); here chances come at loop boundaries, and the stop happens at that boundary.
"""

from __future__ import annotations

import collections
import operator
import os
import time
from collections.abc import Callable

import tensorflow as tf

from estimators import log as logging
from estimators.training.hooks import Hook, LoopInfo
from estimators.training.summaries import scalar_value

_EVENT_FILES = "events.out.tfevents.*"


def read_eval_metrics(eval_dir: str) -> collections.OrderedDict:
    """{global step: {metric: value}} of every evaluation recorded in eval_dir's event files, by step.

    A file cut short (a writer killed mid-record) is read up to the damage, with a warning, as 2.15 did.
    """
    by_step: dict[int, dict] = collections.defaultdict(dict)
    if tf.io.gfile.exists(eval_dir):
        for path in sorted(tf.io.gfile.glob(os.path.join(eval_dir, _EVENT_FILES))):
            try:
                for event in tf.compat.v1.train.summary_iterator(path):
                    values = {v.tag: x for v in event.summary.value if (x := scalar_value(v)) is not None}
                    if values:
                        by_step[event.step].update(values)
            except tf.errors.DataLossError as error:
                logging.warning("Skipping the rest of %s: it is damaged (%s).", path, error)
    return collections.OrderedDict(sorted(by_step.items()))


class _StopOnPredicateHook(Hook):
    """Calls should_stop_fn at loop boundaries, at most every N seconds or steps; True stops training.

    In a tf.compat.v1 MonitoredSession (begin() without a step) it checks after session runs instead, at the
    global step each run started from, and requests the session's stop; as in 2.15 it then also sets the
    graph's stop variable (`_get_or_create_stop_var`), which other workers' _CheckForStoppingHook read.
    """

    def __init__(self, should_stop_fn: Callable[[], bool], run_every_secs: float | None = 60,
                 run_every_steps: int | None = None):
        self._should_stop_fn = should_stop_fn
        self._every_secs, self._every_steps = run_every_secs, run_every_steps
        self._last_step: int | None = None
        self._last_time: float | None = None

    def _due(self, step: int) -> bool:
        if self._last_step is None:
            return True
        if step == self._last_step:
            return False
        if self._every_steps is not None:
            return step >= self._last_step + self._every_steps
        if self._every_secs is not None:
            return time.monotonic() >= self._last_time + self._every_secs
        return True

    def begin(self, step: int | None = None) -> None:
        self._last_step = self._last_time = None
        if step is None:  # tf.compat.v1's session protocol
            self._global_step = tf.compat.v1.train.get_global_step()
            if self._global_step is None:
                raise RuntimeError("Global step should be created to use early stopping in a tf.compat.v1 session.")
            self._stop_var = _get_or_create_stop_var()
            self._stop_op = tf.compat.v1.assign(self._stop_var, True)

    def after_create_session(self, session, coord) -> None:
        """Nothing to do when the session starts (tf.compat.v1's session protocol)."""

    def before_run(self, run_context) -> tf.compat.v1.train.SessionRunArgs:
        return tf.compat.v1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values) -> None:
        if self._check(int(run_values.results)):
            run_context.session.run(self._stop_op)
            run_context.request_stop()

    def after_loop(self, info: LoopInfo) -> bool:
        return self._check(info.step)

    def _check(self, step: int) -> bool:
        if not self._due(step):
            return False
        self._last_step, self._last_time = step, time.monotonic()
        if self._should_stop_fn():
            logging.info("Requesting early stopping at global step %d.", step)
            return True
        return False


def _get_or_create_stop_var() -> tf.Variable:
    """The default graph's early-stopping flag (signal_early_stopping/STOP, a bool global variable, False at first)."""
    with tf.compat.v1.variable_scope("signal_early_stopping", values=[], reuse=tf.compat.v1.AUTO_REUSE):
        return tf.compat.v1.get_variable("STOP", shape=[], dtype=tf.bool, trainable=False,
                                         initializer=tf.compat.v1.constant_initializer(False),
                                         collections=[tf.compat.v1.GraphKeys.GLOBAL_VARIABLES])


class _CheckForStoppingHook(tf.compat.v1.train.SessionRunHook):
    """Requests the session's stop once the graph's stop variable is set (by the chief's _StopOnPredicateHook).

    A tf.compat.v1 session hook, as 2.15's: the stop variable is read along with every session run.
    """

    def begin(self) -> None:
        self._stop_var = _get_or_create_stop_var()

    def before_run(self, run_context) -> tf.compat.v1.train.SessionRunArgs:
        return tf.compat.v1.train.SessionRunArgs(self._stop_var)

    def after_run(self, run_context, run_values) -> None:
        if run_values.results:
            logging.info("Early stopping requested, suspending run.")
            run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn: Callable[[], bool], run_every_secs: float | None = 60,
                             run_every_steps: int | None = None) -> Hook:
    """A training hook that stops training when should_stop_fn() returns True (checked as 2.15 did)."""
    from estimators.estimator import Estimator

    if not isinstance(estimator, Estimator):
        raise TypeError(f"estimator must be an estimators.Estimator, got {type(estimator).__name__}.")
    if not callable(should_stop_fn):
        raise TypeError("should_stop_fn must be callable (no arguments, returns a bool).")
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Set only one of run_every_secs and run_every_steps.")
    for name, value in (("run_every_secs", run_every_secs), ("run_every_steps", run_every_steps)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
            raise ValueError(f"{name} must be a number >= 0 or None, got {value!r}.")
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _metric(metrics: dict, metric_name: str, step: int, eval_dir: str) -> float:
    if metric_name not in metrics:
        raise ValueError(f"Early stopping watches eval metric {metric_name!r}, but the evaluation at global step "
                         f"{step} in {eval_dir} has only {sorted(metrics)}; pass one of those as metric_name.")
    return metrics[metric_name]


def _threshold_hook(estimator, metric_name: str, threshold: float, higher_is_better: bool, eval_dir: str | None,
                    min_steps: int, run_every_secs, run_every_steps) -> Hook:
    eval_dir = eval_dir or estimator.eval_dir()
    better = operator.gt if higher_is_better else operator.lt
    relation = "greater than" if higher_is_better else "less than"

    def crossed() -> bool:
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = _metric(metrics, metric_name, step, eval_dir)
            if better(value, threshold):
                logging.info("At step %s, metric %r is %s, %s the early-stopping threshold %s.", step, metric_name,
                             value, relation, threshold)
                return True
        return False

    return make_early_stopping_hook(estimator, crossed, run_every_secs, run_every_steps)


def _no_improvement_hook(estimator, metric_name: str, max_steps: int, higher_is_better: bool, eval_dir: str | None,
                         min_steps: int, run_every_secs, run_every_steps) -> Hook:
    eval_dir = eval_dir or estimator.eval_dir()
    better = operator.gt if higher_is_better else operator.lt
    change = "increase" if higher_is_better else "decrease"

    def stalled() -> bool:
        best, best_step = None, None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = _metric(metrics, metric_name, step, eval_dir)
            if best is None or better(value, best):
                best, best_step = value, step
            if step - best_step >= max_steps:
                logging.info("No %s in metric %r for %d steps (early stopping after %d).", change, metric_name,
                             step - best_step, max_steps)
                return True
        return False

    return make_early_stopping_hook(estimator, stalled, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name: str, threshold: float, eval_dir: str | None = None,
                        min_steps: int = 0, run_every_secs: float | None = 60,
                        run_every_steps: int | None = None) -> Hook:
    """Stops training once an evaluation at step >= min_steps has metric_name above threshold."""
    return _threshold_hook(estimator, metric_name, threshold, True, eval_dir, min_steps, run_every_secs,
                           run_every_steps)


def stop_if_lower_hook(estimator, metric_name: str, threshold: float, eval_dir: str | None = None,
                       min_steps: int = 0, run_every_secs: float | None = 60,
                       run_every_steps: int | None = None) -> Hook:
    """Stops training once an evaluation at step >= min_steps has metric_name below threshold."""
    return _threshold_hook(estimator, metric_name, threshold, False, eval_dir, min_steps, run_every_secs,
                           run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name: str, max_steps_without_increase: int,
                             eval_dir: str | None = None, min_steps: int = 0, run_every_secs: float | None = 60,
                             run_every_steps: int | None = None) -> Hook:
    """Stops training when metric_name's best evaluation is max_steps_without_increase steps old or more."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_increase, True, eval_dir, min_steps,
                                run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name: str, max_steps_without_decrease: int,
                             eval_dir: str | None = None, min_steps: int = 0, run_every_secs: float | None = 60,
                             run_every_steps: int | None = None) -> Hook:
    """Stops training when metric_name's lowest evaluation is max_steps_without_decrease steps old or more."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_decrease, False, eval_dir, min_steps,
                                run_every_secs, run_every_steps)
