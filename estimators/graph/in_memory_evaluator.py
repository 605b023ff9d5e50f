"""InMemoryEvaluatorHook: evaluate while training, every N steps and at the end, without waiting for model_dir.

tf.estimator 2.15 copied the training session's variables into an evaluation graph. Here the hook saves
the training session's variables to a private folder (never model_dir, so no checkpoint of the run is
added or rotated) and runs estimator.evaluate() on that snapshot: the same values, the same metrics and
the same eval_<name> summaries. A SessionRunHook, so training runs on the graph path.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.path_choice import is_session_hook


class InMemoryEvaluatorHook(tf.compat.v1.train.SessionRunHook):
    """Runs estimator.evaluate(input_fn, steps, hooks, name=name) when the training session starts (before the
    first step), after every every_n_iter steps of this train() call, and at its end, as 2.15's hook did."""

    def __init__(self, estimator: Any, input_fn: Callable, steps: int | None = None, hooks: Any = None,
                 name: str | None = None, every_n_iter: int = 100):
        if every_n_iter is None or isinstance(every_n_iter, bool) or every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not hasattr(estimator, "evaluate") or not hasattr(estimator, "model_dir"):
            raise TypeError(f"estimator must be an estimators.Estimator, got {type(estimator).__name__}.")
        config = estimator.config
        if getattr(config, "num_ps_replicas", 0) > 0 or getattr(config, "num_worker_replicas", 1) > 1:
            raise ValueError("InMemoryEvaluator supports only single machine (aka Local) setting: the estimator's "
                             "config names parameter servers or several workers (TF_CONFIG).")
        hooks = list(hooks or ())
        for hook in hooks:
            if not is_session_hook(hook):
                raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook!r}")
        self._estimator, self._input_fn, self._steps = estimator, input_fn, steps
        self._hooks, self._name, self._every_n_iter = hooks, name, every_n_iter
        self.results: dict | None = None  # the latest evaluation's metrics

    def begin(self) -> None:
        self._check_evaluation_scaffold()
        if tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS):
            raise ValueError("InMemoryEvaluatorHook does not support saveables other than global variables: the "
                             "training graph has SAVEABLE_OBJECTS, which the evaluation would not see. Make them "
                             "global variables, or evaluate from model_dir's checkpoints instead.")
        self._timer = tf.compat.v1.train.SecondOrStepTimer(every_steps=self._every_n_iter)
        self._iterations = 0
        self._folder = tempfile.mkdtemp(prefix="in_memory_eval_")
        self._saver = tf.compat.v1.train.Saver(sharded=True, max_to_keep=1, save_relative_paths=True)

    def _check_evaluation_scaffold(self) -> None:
        """Builds the evaluation's graph once, as 2.15's begin() did, and refuses a Scaffold with its own saver or
        init_fn: the evaluation starts from the training session's variables, so neither would be honoured."""
        from estimators.graph.build import call_graph
        from estimators.mode_keys import ModeKeys

        estimator = self._estimator
        context = estimator._context.on_graph(estimator._graph_reason or "InMemoryEvaluatorHook")  # noqa: SLF001
        with call_graph(context, self._input_fn, ModeKeys.EVAL) as built:
            scaffold = built.spec.scaffold
        for part in ("saver", "init_fn"):
            if getattr(scaffold, part) is not None:
                raise ValueError(f"InMemoryEvaluatorHook does not support custom {part}: the evaluation model_fn's "
                                 f"Scaffold has one, but the hook evaluates the training session's variables as "
                                 f"they are. Leave {part} out of the Scaffold in EVAL mode.")

    def after_create_session(self, session, coord) -> None:
        del coord
        self._evaluate(session)  # the metrics before training

    def after_run(self, run_context, run_values) -> None:
        del run_values
        self._iterations += 1
        if self._timer.should_trigger_for_step(self._iterations):
            self._evaluate(run_context.session)

    def end(self, session) -> None:
        self._evaluate(session)
        shutil.rmtree(self._folder, ignore_errors=True)

    def _evaluate(self, session) -> None:
        snapshot = self._saver.save(session, os.path.join(self._folder, "model.ckpt"), write_meta_graph=False,
                                    write_state=False)
        self.results = self._estimator.evaluate(self._input_fn, steps=self._steps, hooks=self._hooks,
                                                checkpoint_path=snapshot, name=self._name)
        self._timer.update_last_triggered_step(self._iterations)
