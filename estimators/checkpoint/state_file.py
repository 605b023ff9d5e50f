"""The text `checkpoint` state file: read it without trusting it, write it as tf.estimator 2.15 wrote it.

The file is TensorFlow's CheckpointState text proto. Written: checkpoints inside model_dir by bare name
(`model_checkpoint_path: "model.ckpt-9"`), for local (relative or absolute) and gs:// model_dirs alike,
which is what 2.15's Saver (save_relative_paths=True) and tf.train.CheckpointManager wrote, so
tf.train.latest_checkpoint(model_dir) and TensorBoard find them from any working directory.
(tf.compat.v1.train.update_checkpoint_state rewrites a bare name relative to the *working directory* when
model_dir is not absolute: "../../model.ckpt-9" for `runs/x` or gs://; that is why it is not used.)

Read: a missing file (NotFoundError) is "missing"; a storage failure is retried and then raised
(storage.ModelDirUnreadableError), never taken as "no checkpoint". A state file copied with its model_dir
(to Drive, to another bucket) may name absolute paths of the old place: a checkpoint of the same name
inside model_dir wins.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

import tensorflow as tf
from google.protobuf import text_format
from tensorflow.python.lib.io import file_io
from tensorflow.python.training.checkpoint_state_pb2 import CheckpointState

from estimators.checkpoint import storage

STATE_FILE = "checkpoint"


class State(NamedTuple):
    """What the state file says: the latest checkpoint and all it lists (oldest first, latest last)."""

    latest: str | None
    listed: tuple[str, ...]
    problem: str | None  # None when the file was read; else "missing" or why it is unusable


def path(model_dir: str) -> str:
    return os.path.join(model_dir, STATE_FILE)


def read(model_dir: str) -> State:
    """The state file's checkpoints, resolved inside model_dir; a bad file is a `problem`, not an error.

    Raises storage.ModelDirUnreadableError when the storage keeps failing to read it.
    """
    where = path(model_dir)
    try:
        data = storage.read(model_dir, f"the `checkpoint` state file {where}",
                            lambda: file_io.read_file_to_string(where, binary_mode=True))
    except tf.errors.NotFoundError:
        return State(None, (), "missing")
    if not data.strip():
        return State(None, (), "empty")
    try:
        proto = text_format.Parse(data.decode("utf-8"), CheckpointState())
    except (text_format.ParseError, UnicodeDecodeError):
        return State(None, (), "unreadable")
    if not proto.model_checkpoint_path:  # parsed, but names no checkpoint
        return State(None, (), "unreadable")
    latest = _resolve(model_dir, proto.model_checkpoint_path)
    listed = [_resolve(model_dir, p) for p in proto.all_model_checkpoint_paths]
    listed = [p for p in dict.fromkeys(listed) if p != latest] + [latest]
    return State(latest, tuple(listed), None)


def write(model_dir: str, prefixes: list[str]) -> None:
    """Makes prefixes[-1] the latest checkpoint and `prefixes` the list (atomic where the filesystem allows).

    Checkpoints inside model_dir are written by bare name, as 2.15's Saver and tf.train.CheckpointManager
    wrote them, so the folder can be copied or moved and is read by this project, tf.estimator and TensorFlow.
    """
    names = [os.path.basename(p) if os.path.dirname(p) == model_dir.rstrip("/") else p for p in prefixes]
    proto = CheckpointState(model_checkpoint_path=names[-1], all_model_checkpoint_paths=names)
    text = text_format.MessageToString(proto)
    storage.write(model_dir, f"the `checkpoint` state file {path(model_dir)}",
                  lambda: file_io.atomic_write_string_to_file(path(model_dir), text))


def _resolve(model_dir: str, listed: str) -> str:
    """model_dir/<name> when that checkpoint exists (or the listed path does not), else the listed path.

    Relative names are model_dir's (as TensorFlow reads them); names from another machine
    (`/home/u/run/model.ckpt-5`, `gs://old/run/model.ckpt-5`) are found here by basename.
    """
    inside = os.path.join(model_dir, re.split(r"[/\\]", listed)[-1])
    if not _is_absolute(listed):
        listed = os.path.join(model_dir, listed)
    if listed == inside or storage.read(model_dir, f"{inside}.index",
                                        lambda: tf.io.gfile.exists(inside + ".index")):
        return inside
    try:
        if tf.io.gfile.exists(listed + ".index"):
            return listed
    except tf.errors.OpError:  # another filesystem we cannot reach from here
        pass
    return inside


def _is_absolute(name: str) -> bool:
    return os.path.isabs(name) or "://" in name
