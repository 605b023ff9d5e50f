"""Warm starting as tf.estimator 2.15 did it: WarmStartSettings and which variables it selects.

The selection rules are tf.compat.v1.train.warm_start's (tensorflow/python/training/warm_starting_util.py,
TF 2.15), checked against the real 2.15 in tests/test_warm_start_selection.py:
- a string is a regex matched with re.match against each TRAINABLE variable's graph name, which ends in
  ":0" (so "dense/kernel$" matches nothing; ".*" skips BatchNorm moving statistics, optimizer slots and
  global_step);
- a list of strings: each a regex over ALL (global) variables; a variable picked twice is an error;
- None, "" and [] warm-start nothing (2.15 then warm-started only variables with vocab infos);
- var_name_to_prev_var_name renames (a name it gives that was not selected is an error); without it, an
  object-based checkpoint is read through its object graph (variable name -> checkpoint key);
- a directory means its latest checkpoint; a SavedModel directory means its variables/variables.
"""

from __future__ import annotations

import collections
import os
import re
from collections.abc import Collection, Mapping

import tensorflow as tf

from estimators import log as logging
from estimators.checkpoint import object_keys
from estimators.checkpoint.checkpointer import Assignment, checkpoint_at


class WarmStartSettings(
        collections.namedtuple("WarmStartSettings", ["ckpt_to_initialize_from", "vars_to_warm_start",
                                                     "var_name_to_vocab_info", "var_name_to_prev_var_name"])):
    """tf.estimator.WarmStartSettings: where to warm-start from and which variables (same fields, defaults)."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("WarmStartSettings needs ckpt_to_initialize_from (a checkpoint prefix or directory).")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start, var_name_to_vocab_info or {},
                               var_name_to_prev_var_name or {})


def settings_from(warm_start_from) -> WarmStartSettings | None:
    """Estimator(warm_start_from=...) as tf.estimator read it: None, a path, or WarmStartSettings."""
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        if tf.io.gfile.exists(os.path.join(path, "variables", "variables.index")):  # a SavedModel
            return WarmStartSettings(os.path.join(path, "variables", "variables"))
        return WarmStartSettings(path)
    raise ValueError(f"warm_start_from must be a path string or a WarmStartSettings, got {type(warm_start_from)}.")


def checkpoint_path(settings: WarmStartSettings) -> str:
    """The checkpoint to warm-start from: a directory's latest checkpoint, or the prefix itself."""
    return checkpoint_at(settings.ckpt_to_initialize_from, "warm-start from")


def select(settings: WarmStartSettings, variables: Mapping[str, tf.Variable],
           trainable: Collection[str] | None = None,
           object_names: Mapping[str, str] | None = None) -> dict[str, Assignment]:
    """{checkpoint name: variable} to warm-start, by tf.estimator 2.15's rules (module docstring).

    variables: the model's checkpointed variables by TF1 name, in creation order (no metric state);
    trainable: the names of the trainable ones (default: each variable's `.trainable`); object_names:
    object_keys.full_name_keys() of the checkpoint (None for a name-based one). A name fed to two variables maps
    to a tuple of them.
    """
    if trainable is None:
        trainable = {name for name, var in variables.items() if getattr(var, "trainable", False)}
    wanted = settings.vars_to_warm_start
    chosen = _chosen(wanted, list(variables), set(trainable))
    renames = dict(settings.var_name_to_prev_var_name or {})
    if not renames and object_names is not None:
        absent = [name for name in chosen if name not in object_names]
        if absent:
            raise ValueError(
                f"Warm-starting from an object-based checkpoint that has no value for {len(absent)} selected "
                f"variable(s): {', '.join(absent[:10])}{' ...' if len(absent) > 10 else ''}. Map them with "
                "var_name_to_prev_var_name, or narrow vars_to_warm_start.")
        renames = {name: object_names[name] for name in chosen}
    result: dict[str, Assignment] = {}
    used = set()
    for name in chosen:
        previous = renames.get(name)
        if previous:
            used.add(name)
        if not wanted:  # None, "" or []: 2.15 warm-started only variables with vocab infos
            continue
        key = previous or name
        result[key] = (*_as_tuple(result[key]), variables[name]) if key in result else variables[name]
    unused = sorted(set(renames) - used)
    if unused:
        raise ValueError(
            f"var_name_to_prev_var_name names variables that are not warm-started: {unused}. Misspelt, or not "
            f"selected by vars_to_warm_start={wanted!r}? Selected: {chosen[:20]}{' ...' if len(chosen) > 20 else ''}")
    logging.info("Warm-starting %d variables from %s.", len(chosen) if wanted else 0, settings.ckpt_to_initialize_from)
    return result


def plan(settings: WarmStartSettings, variables: Mapping[str, tf.Variable],
         trainable: Collection[str] | None = None) -> tuple[str, dict[str, Assignment]]:
    """(checkpoint path, {checkpoint name: variable}) for Checkpointer.restore(), which checks shapes. Vocab infos
    are refused here: the graph path (canned estimators) remaps with tf.compat.v1.train.warm_start, this one cannot."""
    if settings.var_name_to_vocab_info:
        raise ValueError(
            "WarmStartSettings(var_name_to_vocab_info=...) is not supported for this model_fn: remapping embedding "
            "rows by vocabulary needs tf.estimator's graph-mode initializers (canned estimators have them). Remap "
            "those variables yourself: read the old rows with tf.train.load_variable, reorder them for the new "
            "vocabulary, pass them as the layer's initializer in model_fn, and leave them out of "
            "vars_to_warm_start.")
    path = checkpoint_path(settings)
    return path, select(settings, variables, trainable,
                        object_keys.full_name_keys(tf.train.load_checkpoint(path)) or None)


def _chosen(wanted, names: list[str], trainable: set[str]) -> list[str]:
    """The variable names vars_to_warm_start picks, in creation order (2.15's get_collection(scope=...))."""
    if wanted is None or isinstance(wanted, str):
        pattern = _compile(wanted) if wanted is not None else None
        chosen = [n for n in names if n in trainable and (pattern is None or pattern.match(n + ":0"))]
        if pattern is not None and not chosen:
            _warn_nothing(wanted, [n for n in names if n in trainable], names)
        return chosen
    if not isinstance(wanted, list):
        raise ValueError(f"vars_to_warm_start must be a str, a list of str or None, got {type(wanted).__name__}.")
    if not all(isinstance(item, str) for item in wanted):
        raise ValueError("vars_to_warm_start as a list must hold only variable-name regexes (strings); got "
                         f"{[type(item).__name__ for item in wanted]}.")
    chosen: list[str] = []
    for item in wanted:
        matches = [n for n in names if _compile(item).match(n + ":0")]
        if not matches:
            _warn_nothing(item, names, names)
        for name in matches:
            if name in chosen:
                raise ValueError(f"vars_to_warm_start selects {name!r} twice (again by {item!r}); tf.estimator "
                                 "refused this too. Make the patterns select each variable once.")
            chosen.append(name)
    return chosen


def _compile(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise ValueError(f"vars_to_warm_start pattern {pattern!r} is not a valid regex: {err}.") from None


def _warn_nothing(pattern: str, pool: list[str], names: list[str]) -> None:
    """tf.estimator warm-started nothing here without a word; this says so, with the likely reason."""
    hint = ""
    if any(re.match(pattern, n) for n in pool):
        hint = " (names are matched with their ':0' suffix, as in tf.estimator: end a pattern with ':0$', not '$')"
    elif len(pool) < len(names) and any(re.match(pattern, n + ":0") for n in names):
        hint = " (a string selects trainable variables only, as in tf.estimator: pass a list of patterns for all)"
    logging.warning("vars_to_warm_start pattern %r selects no variable%s; nothing is warm-started by it.",
                    pattern, hint)


def _as_tuple(value: Assignment) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)
