"""evaluate() on the graph path, as tf.estimator 2.15 ran it: a fresh session per call (so local variables,
metric state included, start from their initialisers), the checkpoint restored by the Scaffold's Saver, the
metric updates run until the input ends or `steps`, the values read once at the end.

SIGINT/SIGTERM (Estimator.evaluate's stopping_on_signals sets the estimator's stop request) end the loop
before the next batch: EvaluationInterrupted, nothing written (2.15 raised KeyboardInterrupt between
session.run calls on Ctrl-C and died at once on SIGTERM). Across collective workers every batch is a
collective step, so there the evaluation runs to its end.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators import log as logging
from estimators.engine_context import EngineContext
from estimators.graph import replicated
from estimators.graph.build import call_graph, ensure_saver, warm_start_when_fresh
from estimators.graph.hooks import session_hooks
from estimators.graph.saving import RestoredFiniteCheck
from estimators.mode_keys import ModeKeys
from estimators.training import eval_summaries
from estimators.training.preemption import EvaluationInterrupted

LOSS = "loss"
GLOBAL_STEP = "global_step"


class _StopAfter(tf.compat.v1.train.SessionRunHook):
    """Stops after `steps` session runs, logging 2.15's "Evaluation [i/N]" progress."""

    def __init__(self, steps: int | None):
        self._steps, self._done = steps, 0

    def after_run(self, run_context, run_values) -> None:
        del run_values
        self._done += 1
        if self._steps is not None:
            if self._done % max(1, self._steps // 10) == 0 or self._done == self._steps:
                logging.info("Evaluation [%d/%d]", self._done, self._steps)
            if self._done >= self._steps:
                run_context.request_stop()


def evaluate(ctx: EngineContext, input_fn: Callable, steps: int | None, hooks: Any, path: str | None,
             name: str | None) -> dict:
    """Metrics of the checkpoint at `path` (None: freshly initialised variables, as 2.15 warned)."""
    if path is None:
        logging.warning("Could not find trained model in model_dir: %s, running initialization to evaluate.",
                        ctx.model_dir)
    with call_graph(ctx, input_fn, ModeKeys.EVAL) as built:
        warm_start_when_fresh(ctx, path)
        spec = built.spec
        metrics = _metric_pairs(spec.eval_metric_ops)
        metrics[LOSS] = spec.loss_metric or tf.compat.v1.metrics.mean(spec.loss)
        updates = tf.group(*[update for _, update in metrics.values()])
        values = {key: value for key, (value, _) in metrics.items()}
        values[GLOBAL_STEP] = built.global_step
        final = tf.compat.v1.train.FinalOpsHook(values)
        all_hooks = [*built.input_hooks, _StopAfter(steps), *session_hooks(hooks, "evaluate() hooks", spec.loss),
                     *spec.evaluation_hooks, final, RestoredFiniteCheck(path)]
        ensure_saver(spec.scaffold)
        master, session_config = replicated.session_target(built.strategy, ctx.config.session_config)
        creator = tf.compat.v1.train.ChiefSessionCreator(spec.scaffold, master=master, config=session_config,
                                                         checkpoint_filename_with_path=path)
        stop = None if replicated.spans_workers(built.strategy) else ctx.stop
        batches = 0
        with tf.compat.v1.train.MonitoredSession(creator, hooks=all_hooks) as session:
            while not session.should_stop() and not (stop is not None and stop.requested):
                session.run(updates)
                batches += 1
        if stop is not None and stop.requested:
            step = ctx.checkpointer.global_step(path) if path else 0
            raise EvaluationInterrupted(stop.signal_name, step, path, batches)
        results = dict(final.final_ops_values)
        _write_summaries(ctx, name, results, path)
    logging.info("Saving dict for global step %d: %s", results[GLOBAL_STEP],
                 ", ".join(f"{k} = {v}" for k, v in sorted(results.items())))
    return results


def _metric_pairs(eval_metric_ops: dict) -> dict:
    """{name: (value, update_op)}; 2.15's errors for a reserved name or a value that is not such a pair."""
    pairs = {}
    for key, metric in eval_metric_ops.items():
        if key == LOSS:
            raise ValueError('Metric with name "loss" is not allowed, because Estimator already defines a default '
                             "metric with the same name.")
        if key == GLOBAL_STEP:
            raise ValueError("Metric with name `global_step` is not allowed, because Estimator already defines a "
                             "default metric with the same name.")
        if not (isinstance(metric, (tuple, list)) and len(metric) == 2):
            raise TypeError(f"eval_metric_ops[{key!r}] must be a (metric_tensor, update_op) pair such as "
                            f"tf.compat.v1.metrics.* return on the graph path, got {type(metric).__name__}.")
        pairs[key] = tuple(metric)
    return pairs


def _write_summaries(ctx: EngineContext, name: str | None, results: dict, path: str | None) -> None:
    """2.15's eval events: one with every scalar metric, then the checkpoint path, in model_dir/eval[_name]."""
    if not ctx.config.is_chief:
        return
    writer = tf.compat.v1.summary.FileWriterCache.get(os.path.join(ctx.model_dir,
                                                                   f"eval_{name}" if name else "eval"))
    step = int(results[GLOBAL_STEP])
    writer.add_summary(eval_summaries.metrics_summary(results), step)
    if path:
        writer.add_summary(eval_summaries.checkpoint_path_summary(path), step)
    writer.flush()
