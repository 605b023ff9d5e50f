"""One call's graph, as tf.estimator built it: a fresh tf.Graph seeded with tf_random_seed, the global
step, input_fn's tensors and model_fn's spec."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import tensorflow as tf

from estimators import path_choice
from estimators.checkpoint import warm_start
from estimators.engine_context import EngineContext
from estimators.graph import replicated
from estimators.graph.inputs import input_tensors
from estimators.graph.specs import SessionSpec, call_model_fn
from estimators.mode_keys import ModeKeys


@dataclass
class CallGraph:
    """What was built in one train/evaluate/predict call's graph."""

    global_step: tf.Variable
    spec: SessionSpec
    input_hooks: list
    strategy: Any = None  # the strategy replicating model_fn, or None (one device)


@contextlib.contextmanager
def seeded_graph(ctx: EngineContext, strategy: Any = None) -> Iterator[tf.Graph]:
    """A fresh graph, the default one for the block, seeded with tf_random_seed and holding the global step,
    with model_fn calls marked as the graph path's (as tf.estimator began every call and export); with a
    strategy, the block runs in its scope (the global step then is one of its variables)."""
    graph = tf.Graph()
    with graph.as_default(), path_choice.graph_call(ctx.graph_reason), \
            (strategy.scope() if strategy is not None else contextlib.nullcontext()):  # made in the new graph
        if ctx.config.tf_random_seed is not None:
            tf.compat.v1.set_random_seed(ctx.config.tf_random_seed)
        tf.compat.v1.train.get_or_create_global_step()
        yield graph


@contextlib.contextmanager
def call_graph(ctx: EngineContext, input_fn: Callable, mode: str) -> Iterator[CallGraph]:
    """Builds the call's graph and keeps it the default graph for the block (hooks are made in it)."""
    strategy = ctx.deployment.graph_strategy(mode)
    model_fn = ctx.deployment.graph_model_fn(ctx.model_fn)
    with seeded_graph(ctx, strategy):
        params, model_fn_params = ctx.deployment.graph_input_params(mode), ctx.deployment.graph_model_fn_params(mode)
        if strategy is None:
            features, labels, input_hooks = input_tensors(input_fn, mode=mode, params=params,
                                                          config=ctx.config)
            if mode == ModeKeys.PREDICT and not ctx.deployment.graph_labels_in_predict():
                labels = None  # 2.15's predict() dropped them off a TPU (its TPU predict step checked and kept them)
            spec = call_model_fn(model_fn, features, labels, mode, model_fn_params, ctx.config)
        else:
            features, labels, input_hooks = replicated.input_iterator(strategy, input_fn, mode=mode, params=params,
                                                                      config=ctx.config)
            labels = None if mode == ModeKeys.PREDICT else labels  # replicated: never on a TPU here
            # v1 optimizers scale each replica's loss by 1/replicas under this flag, as with 2.15's Estimator.
            scaling = strategy._scale_loss_for_estimator_enabled() if mode == ModeKeys.TRAIN \
                else contextlib.nullcontext()  # noqa: SLF001
            with scaling:
                spec = replicated.replicated_spec(strategy, model_fn, features, labels, mode,
                                                  model_fn_params, ctx.config)
        yield CallGraph(tf.compat.v1.train.get_global_step(), spec, input_hooks, strategy)


def warm_start_when_fresh(ctx: EngineContext, checkpoint: str | None) -> None:
    """Without a checkpoint to restore, the call's graph starts from warm_start_from, as 2.15 did in train,
    evaluate and predict alike (after model_fn made the variables)."""
    settings = ctx.warm_start
    if checkpoint is None and settings is not None:
        tf.compat.v1.train.warm_start(warm_start.checkpoint_path(settings), settings.vars_to_warm_start,
                                      settings.var_name_to_vocab_info or None,
                                      settings.var_name_to_prev_var_name or None)


def ensure_saver(scaffold: Any) -> None:
    """2.15's default Saver when neither the Scaffold nor the SAVERS collection has one (sharded, relative
    paths). It keeps every file: the Checkpointer rotates checkpoints itself."""
    if scaffold.saver is None and not tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SAVERS):
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SAVERS, tf.compat.v1.train.Saver(
            sharded=True, max_to_keep=None, defer_build=True, save_relative_paths=True))
