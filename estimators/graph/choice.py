"""Which path runs a model_fn: TF2 (tf.function under tf.distribute) or graph-and-session (TF1's machinery).

Chosen from what the program does, as issue 16 asks: eager execution disabled, tf.compat.v1
SessionRunHooks handed to train()/evaluate()/predict(), or a model_fn whose spec or ops only a session
can run (a Scaffold, scaffold_fn, session hooks in the spec, init_from_checkpoint's restore ops). The
TF2 path finds the last kind while it traces model_fn, before any step runs, and raises
GraphPathNeeded; the Estimator then runs the call, and every later one, on the graph path.
`RunConfig(execution="graph" | "tf2")` decides instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tensorflow as tf

GRAPH, TF2 = "graph", "tf2"
EXECUTIONS = (None, GRAPH, TF2)
# Ops that read a checkpoint: built in model_fn by init_from_checkpoint (or a Saver), they belong in a
# session's initialiser, run once; in a tf.function they would run on every step.
_RESTORE_OPS = frozenset({"RestoreV2", "Restore", "RestoreSlice"})


class GraphPathNeeded(Exception):  # noqa: N818 - a signal between the engine's two paths, not an error
    """The TF2 path met something only a session can run; raised before any step runs or anything is written.

    No __init__ of its own: AutoGraph re-raises such an exception from a traced function as the same type,
    with the trace prepended to the message (the reason stays its last line).
    """

    @property
    def reason(self) -> str:
        lines = str(self).strip().splitlines()
        last = lines[-1].strip() if lines else ""
        prefix = f"{type(self).__name__}: "
        return last[len(prefix):] if last.startswith(prefix) else last


def is_session_hook(hook: Any) -> bool:
    return isinstance(hook, (tf.compat.v1.train.SessionRunHook, tf.compat.v1.train.CheckpointSaverListener))


def any_session_hooks(*groups: Iterable | None) -> bool:
    """Whether any of the hook lists (a single hook counts as a list of one) holds a tf.compat.v1 hook."""
    for hooks in groups:
        if hooks is None:
            continue
        if is_session_hook(hooks):
            return True
        if isinstance(hooks, Iterable) and any(is_session_hook(h) for h in hooks):
            return True
    return False


def requested_path(config: Any, *hook_groups: Iterable | None) -> str | None:
    """The path a call must take before model_fn is seen: RunConfig's choice, else GRAPH when eager execution
    is off or session hooks were given, else None (TF2 unless model_fn shows it needs a session)."""
    chosen = getattr(config, "execution", None)
    if chosen is not None:
        return chosen
    if not tf.executing_eagerly():
        return GRAPH
    if any_session_hooks(*hook_groups):
        return GRAPH
    return None


def spec_needs_session(spec: Any) -> str | None:
    """Why a model_fn's spec can run only in a session (a short phrase), or None."""
    if getattr(spec, "scaffold", None) is not None:
        return "its spec has a Scaffold"
    if getattr(spec, "scaffold_fn", None) is not None:
        return "its TPUEstimatorSpec has a scaffold_fn"
    for name in ("training_hooks", "training_chief_hooks", "evaluation_hooks", "prediction_hooks"):
        if any_session_hooks(getattr(spec, name, None)):
            return f"its spec's {name} hold tf.compat.v1 SessionRunHooks"
    return None


def ops_need_session(operations: Iterable[tf.Operation]) -> str | None:
    """Why ops model_fn built can run only in a session's initialiser (init_from_checkpoint's restores), or None."""
    for op in operations:
        if op.type in _RESTORE_OPS:
            return f"it restores from a checkpoint in the graph ({op.type} `{op.name}`: init_from_checkpoint)"
    return None


def needs_session(reason: str | None, config: Any) -> None:
    """Raises GraphPathNeeded for `reason`, or one clear error when RunConfig pinned the TF2 path."""
    if reason is None:
        return
    if getattr(config, "execution", None) == TF2:
        raise ValueError(f"model_fn cannot run on the TF2 path (RunConfig(execution='tf2')): {reason}, which only a "
                         "session runs. Leave execution unset (chosen from the program) or set execution='graph'.")
    raise GraphPathNeeded(reason)
