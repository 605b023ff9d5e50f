"""The text `checkpoint` state file: read it without trusting it, write it with checkpoints named relative.

Reading and writing go through TensorFlow's own get_checkpoint_state / update_checkpoint_state, so the
file stays the CheckpointState text proto every TensorFlow reader understands. A state file copied with
its model_dir (to Drive, to another bucket) may name absolute paths of the old place: a checkpoint of
the same name inside model_dir wins.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

import tensorflow as tf
from tensorflow.python.util import deprecation

STATE_FILE = "checkpoint"


class State(NamedTuple):
    """What the state file says: the latest checkpoint and all it lists (oldest first, latest last)."""

    latest: str | None
    listed: tuple[str, ...]
    problem: str | None  # None when the file was read; else "missing" or why it is unusable


def path(model_dir: str) -> str:
    return os.path.join(model_dir, STATE_FILE)


def read(model_dir: str) -> State:
    """The state file's checkpoints, resolved inside model_dir; never raises for a bad file."""
    if not tf.io.gfile.exists(path(model_dir)):
        return State(None, (), "missing")
    try:
        proto = tf.compat.v1.train.get_checkpoint_state(model_dir)
    except ValueError:  # parsed (or not text at all), but names no checkpoint
        empty = tf.io.gfile.stat(path(model_dir)).length == 0
        return State(None, (), "empty" if empty else "unreadable")
    if proto is None:  # TensorFlow could not read or parse it (and logged why)
        return State(None, (), "unreadable")
    latest = _resolve(model_dir, proto.model_checkpoint_path)
    listed = [_resolve(model_dir, p) for p in proto.all_model_checkpoint_paths]
    listed = [p for p in dict.fromkeys(listed) if p != latest] + [latest]
    return State(latest, tuple(listed), None)


def write(model_dir: str, prefixes: list[str]) -> None:
    """Makes prefixes[-1] the latest checkpoint and `prefixes` the list (atomic where the filesystem allows).

    Checkpoints inside model_dir are written as bare names (as tf.train.CheckpointManager does), so the
    folder can be copied or moved and still be read by this project, tf.estimator and TensorFlow.
    """
    names = [os.path.basename(p) if os.path.dirname(p) == model_dir.rstrip("/") else p for p in prefixes]
    with deprecation.silence():  # its deprecation note points at CheckpointManager, which writes the same file
        tf.compat.v1.train.update_checkpoint_state(model_dir, names[-1], all_model_checkpoint_paths=names)


def _resolve(model_dir: str, listed: str) -> str:
    """model_dir/<name> when that checkpoint exists (or the listed path does not), else the listed path.

    get_checkpoint_state joins relative names to model_dir and leaves absolute ones as written; names from
    another machine (`/home/u/run/model.ckpt-5`, `gs://old/run/model.ckpt-5`) are found here by basename.
    """
    inside = os.path.join(model_dir, re.split(r"[/\\]", listed)[-1])
    if listed == inside or tf.io.gfile.exists(inside + ".index"):
        return inside
    try:
        if tf.io.gfile.exists(listed + ".index"):
            return listed
    except tf.errors.OpError:  # another filesystem we cannot reach from here
        pass
    return inside
