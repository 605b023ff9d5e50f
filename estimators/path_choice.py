"""Which path runs a model_fn: TF2 (tf.function under tf.distribute) or graph-and-session (TF1's machinery).

Chosen from what the program does, as issue 16 asks: eager execution disabled, or tf.compat.v1 session
hooks handed to train()/evaluate()/predict(), decide before model_fn runs. Otherwise the TF2 path, while
it traces model_fn and before any step runs, raises GraphPathNeeded for what only a session runs (a
Scaffold or scaffold_fn, session hooks in the spec, init_from_checkpoint's restore ops, model_fn's own
local variables, writes outside TRAIN, variables used as set keys); the Estimator then runs the call,
and every later one, on the graph path. `RunConfig(execution="graph" | "tf2")` decides instead.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import tensorflow as tf

GRAPH, TF2 = "graph", "tf2"
# Ops that read a checkpoint: built in model_fn by init_from_checkpoint (or a Saver), they belong in a
# session's initialiser, run once; in a tf.function they would run on every step.
_RESTORE_OPS = frozenset({"RestoreV2", "Restore", "RestoreSlice"})


# The Scaffolds EstimatorSpec made itself for specs built without one (weakly held: they die with their specs).
_DEFAULT_SCAFFOLDS: weakref.WeakSet = weakref.WeakSet()


def default_scaffold() -> tf.compat.v1.train.Scaffold:
    """An empty Scaffold for a spec built without one, as 2.15's EstimatorSpec gave; is_default_scaffold knows it,
    so it puts no model_fn on the graph path (only a Scaffold the model_fn made does)."""
    scaffold = tf.compat.v1.train.Scaffold()
    _DEFAULT_SCAFFOLDS.add(scaffold)
    return scaffold


def is_default_scaffold(scaffold: Any) -> bool:
    """Whether `scaffold` is one EstimatorSpec made for a spec built without one (default_scaffold)."""
    try:
        return scaffold in _DEFAULT_SCAFFOLDS
    except TypeError:  # an unhashable object
        return False


def user_scaffold(scaffold: Any) -> Any:
    """`scaffold` when the model_fn made it, None for none or EstimatorSpec's default one."""
    return None if scaffold is None or is_default_scaffold(scaffold) else scaffold


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


def session_hook_names(*groups: Iterable | None) -> list[str]:
    """Class names of the tf.compat.v1 hooks in the hook lists (a single hook counts as a list of one)."""
    names = []
    for hooks in groups:
        if hooks is None:
            continue
        items = [hooks] if is_session_hook(hooks) else (hooks if isinstance(hooks, Iterable) else [])
        names += [type(h).__name__ for h in items if is_session_hook(h)]
    return names


def requested_path(config: Any, *hook_groups: Iterable | None) -> tuple[str | None, str | None]:
    """(path, why) as far as it is known before model_fn runs: RunConfig's choice; GRAPH when eager execution
    is off or session hooks were given; else (None, None): TF2 unless model_fn shows it needs a session."""
    chosen = getattr(config, "execution", None)
    if chosen is not None:
        return chosen, f"RunConfig(execution={chosen!r})"
    if not tf.executing_eagerly():
        return GRAPH, "eager execution is disabled (tf.compat.v1.disable_eager_execution())"
    names = session_hook_names(*hook_groups)
    if names:
        return GRAPH, f"tf.compat.v1 session hooks were given ({', '.join(names)})"
    return None, None


def spec_needs_session(spec: Any) -> str | None:
    """Why a model_fn's spec can run only in a session (a short phrase), or None."""
    if user_scaffold(getattr(spec, "scaffold", None)) is not None:  # not the empty one EstimatorSpec gives
        return "its spec has a Scaffold"
    if getattr(spec, "scaffold_fn", None) is not None:
        return "its TPUEstimatorSpec has a scaffold_fn"
    for name in ("training_hooks", "training_chief_hooks", "evaluation_hooks", "prediction_hooks"):
        names = session_hook_names(getattr(spec, name, None))
        if names:
            return f"its spec's {name} hold tf.compat.v1 session hooks ({', '.join(names)})"
    return None


def ops_need_session(operations: Iterable[tf.Operation]) -> str | None:
    """Why ops model_fn built can run only in a session's initialiser (init_from_checkpoint's restores), or None."""
    for op in operations:
        if op.type in _RESTORE_OPS:
            return f"it restores from a checkpoint in the graph ({op.type} `{op.name}`: init_from_checkpoint)"
    return None


def locals_need_session(names: list[str]) -> str | None:
    """Why model_fn's own LOCAL_VARIABLES need sessions (each one starts from its initialiser per call), or None."""
    if names:
        return (f"it makes local variables ({', '.join(names[:3])}) that tf.estimator initialised anew for every "
                "train/evaluate/predict session")
    return None


def needs_session(reason: str | None) -> None:
    """Raises GraphPathNeeded for `reason` (the Estimator switches, or refuses under RunConfig(execution='tf2'))."""
    if reason is not None:
        raise GraphPathNeeded(reason)


def pinned_to_tf2(reason: str) -> ValueError:
    """The error when RunConfig(execution='tf2') meets what only a session runs."""
    return ValueError(f"model_fn cannot run on the TF2 path (RunConfig(execution='tf2')): {reason}, which only a "
                      "session runs. Leave execution unset (chosen from the program) or set execution='graph'.")


_local = threading.local()


@contextlib.contextmanager
def graph_call(reason: str) -> Iterator[None]:
    """Marks model_fn/input_fn calls on this thread as the graph path's, chosen because of `reason`."""
    previous = getattr(_local, "reason", None)
    _local.reason = reason
    try:
        yield
    finally:
        _local.reason = previous


def graph_call_reason() -> str | None:
    """Why the model_fn running on this thread is on the graph path, or None (not on it)."""
    return getattr(_local, "reason", None)


def tf2_only(what: str) -> ValueError:
    """The error for a graph-path model_fn that uses `what`, which only the TF2 path runs."""
    return ValueError(
        f"model_fn runs on the graph path (tf.Graph and sessions, as tf.estimator) because "
        f"{graph_call_reason() or 'the program asked for it'}, but it uses {what}, which runs only on the TF2 path "
        "(tf.function). Choose one: for the TF2 path use estimators' hooks (StopAtStepHook, LoggingTensorHook, "
        "estimators.Hook) and warm_start_from instead of session hooks, Scaffolds and init_from_checkpoint; for "
        "the graph path use tf.compat.v1 (tf_keras) layers and tf.compat.v1.train optimizers.")
