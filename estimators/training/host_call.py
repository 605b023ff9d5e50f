"""TPUEstimatorSpec.host_call as TPUEstimator ran it: every replica's tensors, concatenated, to a host function.

TPUEstimator outfed the host_call tensors of every step from every replica, concatenated each
along dimension 0 (so each needs one: reshape scalars to [1]) and called the function on the
host with them, every step (every `experimental_host_call_every_n_steps`-th step of a loop).
With use_tpu=False it called the function directly on the one device's tensors, scalars
included. Here the function runs in the compiled loop after each step, in cross-replica
context, under the step's default summary writer (model_dir, at the global step after the step,
recording when the step's summaries record); a writer or record_if the function sets wins.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf
from tensorflow.python.ops import summary_ops_v2

from estimators.compat.collections import call_collections
from estimators.distribute.strategy import is_tpu_strategy, spans_workers
from estimators.training.step_summaries import write_v1_summaries


def validate_host_call(host_call: Any, what: str = "TPUEstimatorSpec.host_call") -> None:
    """(fn, tensors): fn callable, tensors a list/tuple (one per argument of fn) or a dict (by name)."""
    if not isinstance(host_call, (tuple, list)) or len(host_call) != 2:
        raise ValueError(f"{what} must be a tuple (fn, tensors), got {host_call!r}.")
    fn, tensors = host_call
    if not callable(fn):
        raise TypeError(f"{what}[0] must be callable, got {type(fn).__name__}.")
    if not isinstance(tensors, (tuple, list, dict)):
        raise ValueError(f"{what}[1] must be a list, tuple or dict of tensors, got {type(tensors).__name__}.")
    if isinstance(tensors, (tuple, list)):
        try:
            parameters = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            return
        if any(p.kind == p.VAR_POSITIONAL for p in parameters):
            return
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(positional) != len(tensors):
            raise RuntimeError(f"{what} passes {len(tensors)} tensors to a function that takes {len(positional)} "
                               "arguments; pass one tensor per argument (or a dict keyed by argument name).")


def gather(strategy: tf.distribute.Strategy, tensors: Any) -> Any:
    """Every replica's host_call tensors concatenated along dimension 0, in replica order."""
    across_workers = spans_workers(strategy)

    def concat(value):
        local = strategy.experimental_local_results(value)
        if not local[0].shape.rank:
            if len(local) == 1 and not across_workers and not is_tpu_strategy(strategy):
                return local[0]  # 2.15 ran a use_tpu=False host_call on its one device's tensors as they were
            raise ValueError(
                f"TPUEstimatorSpec.host_call tensors are concatenated along their first dimension across the "
                f"{strategy.num_replicas_in_sync} replicas, so each needs one; got the scalar {local[0].name}. "
                "Reshape it in model_fn: tf.reshape(t, [1]) (TPUEstimator required the same)."
            )
        if not across_workers:
            return tf.concat(local, axis=0)
        return strategy.gather(value, axis=0)

    return tf.nest.map_structure(concat, tensors)


def call(fn: Callable, tensors: Any, global_step: tf.Variable, writers: dict) -> set[str]:
    """Calls the host function with the gathered tensors; its tf.compat.v1 summaries go to the default writer.

    `writers` keeps the file writers the function creates (keyed by their arguments) alive and reused.
    Returns the summary tags the function writes (the engine's own summaries must not reuse them).
    """
    graph = tf.compat.v1.get_default_graph()  # at the graph's root scope, as 2.15 did: tags carry no loop prefix
    tags: set[str] = set()
    with graph.name_scope(None), call_collections(global_step) as collections, _kept_writers(writers), \
            _recorded_tags(tags):
        fn = tf.autograph.experimental.do_not_convert(fn)  # graph code, as 2.15 ran it
        fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)
        v1_summaries = collections.get(tf.compat.v1.GraphKeys.SUMMARIES)
        write_v1_summaries(v1_summaries)
    return tags | {getattr(t, "op", t).name.rsplit("/", 1)[-1].split(":")[0] for t in v1_summaries or ()}


@contextlib.contextmanager
def _summary_function(name: str, original: Callable, replacement: Callable) -> Iterator[None]:
    """tf.summary.<name> (and tf.compat.v2.summary's) is `replacement` for the block, while a host function is
    traced; put back after it, and left alone where something else already replaced it."""
    modules = {id(m): m for m in (tf.summary, tf.compat.v2.summary) if getattr(m, name, None) is original}
    for module in modules.values():
        setattr(module, name, replacement)
    try:
        yield
    finally:
        for module in modules.values():
            setattr(module, name, original)


def _recorded_tags(tags: set):
    """While the host function is traced, the tags of the TF2 summaries it writes (tf.summary.write) go to `tags`."""

    def write(tag, *args, **kwargs):
        tags.add(str(tag))
        return summary_ops_v2.write(tag, *args, **kwargs)

    return _summary_function("write", summary_ops_v2.write, write)


def _kept_writers(writers: dict):
    """tf.summary.create_file_writer, while a host function is traced, returns writers that outlive the trace.

    2.15 host functions create their writer inside the function (a graph op then); in a tf.function
    the writer is made once, at trace time, and its resource dies with the Python object: keep it.
    """

    def create_file_writer(logdir, *args, **kwargs):
        try:
            key = (str(logdir), args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:  # tensor arguments: a writer of its own, still kept
            key = object()
        if key not in writers:
            writers[key] = summary_ops_v2.create_file_writer_v2(logdir, *args, **kwargs)
        return writers[key]

    return _summary_function("create_file_writer", summary_ops_v2.create_file_writer_v2, create_file_writer)
