"""train() on the graph path: tf.estimator 2.15's loop, a MonitoredSession running train_op until a hook stops it.

Hooks run in 2.15's order (the chief's checkpoint hook and chief hooks, the step counter, the summary
saver, then train()'s hooks, the input's, the NaN and loss-logging hooks and the spec's). A session
restores the newest complete checkpoint the Checkpointer finds; without one it initialises (running
init_from_checkpoint's and a Scaffold's init_fn) and warm-starts. Checkpoints are published verified,
under model_dir's lock; SIGINT/SIGTERM end the run at a step boundary after a final checkpoint.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators import log as logging
from estimators.checkpoint.lock import ModelDirLock
from estimators.checkpoint.model_dir_check import check_model_dir
from estimators.engine_context import EngineContext
from estimators.graph import replicated
from estimators.graph.build import call_graph, ensure_saver, warm_start_when_fresh
from estimators.graph.hooks import session_hooks
from estimators.graph.saving import CheckpointHook, NanLossHook, StopOnSignal
from estimators.mode_keys import ModeKeys
from estimators.training.preemption import TrainingInterrupted, stopping_on_signals


def train(ctx: EngineContext, input_fn: Callable, hooks: Any, steps: int | None, max_steps: int | None,
          saving_listeners: Any) -> None:
    """Trains as tf.estimator 2.15's _train_model_default did (steps/max_steps already checked)."""
    config, checkpointer = ctx.config, ctx.checkpointer
    check_model_dir(ctx.model_dir, write=config.is_chief)
    latest = checkpointer.latest()
    start = checkpointer.global_step(latest) if latest else 0
    if max_steps is not None and start >= max_steps:
        logging.info("Skipping training: global step %d already reached max_steps=%d.", start, max_steps)
        return
    chief = config.is_chief
    checkpointer.is_chief = chief
    lock = ModelDirLock(ctx.model_dir) if chief else contextlib.nullcontext()
    with call_graph(ctx, input_fn, ModeKeys.TRAIN) as built, lock as held, \
            stopping_on_signals(ctx.stop) as stop:
        spec = built.spec
        user_hooks = session_hooks(hooks, "train() hooks", spec.loss)
        if steps is not None or max_steps is not None:
            user_hooks.append(tf.compat.v1.train.StopAtStepHook(num_steps=steps, last_step=max_steps))
        warm_start_when_fresh(ctx, latest)
        if not any(s.op.name == "loss" for s in tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)):
            tf.compat.v1.summary.scalar("loss", spec.loss)
        ensure_saver(spec.scaffold)
        saver_hook = _checkpoint_hook(ctx, spec.scaffold, saving_listeners, held if chief else None)
        worker_hooks = [*user_hooks, *built.input_hooks, NanLossHook(spec.loss, checkpointer)]
        if config.log_step_count_steps:
            worker_hooks.append(tf.compat.v1.train.LoggingTensorHook(
                {"loss": spec.loss, "step": built.global_step}, every_n_iter=config.log_step_count_steps))
        worker_hooks += [*spec.training_hooks, StopOnSignal(stop)]
        chief_hooks = [*([saver_hook] if saver_hook else []), *spec.chief_hooks]
        if config.log_step_count_steps:
            chief_hooks.append(tf.compat.v1.train.StepCounterHook(every_n_steps=config.log_step_count_steps,
                                                                  output_dir=ctx.model_dir))
        if config.save_summary_steps:
            chief_hooks.append(tf.compat.v1.train.SummarySaverHook(
                save_steps=config.save_summary_steps, output_dir=ctx.model_dir, scaffold=spec.scaffold))
        master, session_config = replicated.session_target(built.strategy, config.session_config)
        # Across collective workers each one initialises (or restores) its own copies, as 2.15's coordinator let
        # them (worker 0's values are broadcast); otherwise only the chief does and the others wait for it.
        session_creator = (tf.compat.v1.train.ChiefSessionCreator(spec.scaffold, master=master, config=session_config,
                                                                  checkpoint_filename_with_path=latest)
                           if chief or replicated.spans_workers(built.strategy)
                           else tf.compat.v1.train.WorkerSessionCreator(spec.scaffold, master=master,
                                                                        config=session_config))
        loss = None
        with tf.compat.v1.train.MonitoredSession(session_creator, hooks=[*(chief_hooks if chief else []),
                                                                         *worker_hooks]) as session:
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
        if loss is not None:
            logging.info("Loss for final step: %s.", loss)
    if stop.requested:
        step = checkpointer.global_step(checkpointer.latest()) if checkpointer.latest() else 0
        raise TrainingInterrupted(stop.signal_name, step, saver_hook.last_path if saver_hook else None)


def _checkpoint_hook(ctx: EngineContext, scaffold: Any, saving_listeners: Any, lock: Any) -> CheckpointHook | None:
    """The chief's checkpoint hook on RunConfig's schedule; None when checkpoints are off (listeners then refused)."""
    config = ctx.config
    listeners = list(saving_listeners or ())
    if not (config.save_checkpoints_steps or config.save_checkpoints_secs):
        if listeners:
            raise ValueError("There should be a CheckpointSaverHook to use saving_listeners, but RunConfig saves no "
                             "checkpoints (save_checkpoints_steps "
                             "and save_checkpoints_secs are both None); set one of them.")
        return None
    steps, secs = config.save_checkpoints_steps, config.save_checkpoints_secs
    return CheckpointHook(ctx.checkpointer, scaffold, save_steps=steps or None,
                          save_secs=None if steps else (secs if secs and not math.isinf(secs) else None),
                          listeners=listeners, lock=lock, save_graph_def=config.checkpoint_save_graph_def)
