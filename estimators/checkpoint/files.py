"""Checkpoint files in a model_dir: find them, check they are complete, remove them, clean up, fsync.

A checkpoint is a prefix with `<prefix>.index` and `<prefix>.data-NNNNN-of-MMMMM` shards. Listing knows
TF1 name-based `model.ckpt-<step>` (tf.estimator, this project) and object-based `ckpt-<N>` (this project's
previous version, tf.train.CheckpointManager). Every path goes through tf.io.gfile so gs:// works.
"""

from __future__ import annotations

import errno
import os
import re

import tensorflow as tf
from tensorflow.python.checkpoint import checkpoint_management
from tensorflow.python.lib.io import _pywrap_file_io, file_io
from tensorflow.python.training import py_checkpoint_reader
from tensorflow.python.util import deprecation

from estimators.checkpoint import storage

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"  # object-based checkpoints' metadata tensor, not a variable

_INDEX = re.compile(r"^((?:model\.ckpt|ckpt)-(\d+))\.index$")
_SHARD = re.compile(r"\.data-(\d{5})-of-(\d{5})$")
_STEP = re.compile(r"-(\d+)$")
# What killed saves leave behind: TensorBundle's `<file>.tempstate<random>`, a sharded Saver's `<prefix>_temp`
# folder (`<prefix>_temp_<uuid hex>` in TF 1.x), and atomic_write_string_to_file's `<file>.tmp<uuid hex>` (the
# state file, the trainer lock, the graph path's graph.pbtxt).
_LEFTOVER = re.compile(
    r"(\.tempstate\d+$)|(^(?:model\.ckpt|ckpt)-\d+_temp(?:_[0-9a-f]{32})?$)"
    r"|(^(?:checkpoint|trainer\.lock|graph\.pbtxt)\.tmp[0-9a-f]{32}$)"
)


def is_local(path: str) -> bool:
    """True for paths of the local filesystem (a mounted Drive is one): no URL scheme, or file://."""
    return "://" not in path or path.startswith("file://")


def step_of(prefix: str) -> int | None:
    """The number a checkpoint name ends in (`model.ckpt-500` -> 500), None for other names."""
    match = _STEP.search(prefix)
    return int(match.group(1)) if match else None


def find_checkpoints(model_dir: str) -> list[str]:
    """Prefixes of `model.ckpt-N` / `ckpt-N` checkpoints that have an index file, by step (oldest first).

    [] only when the listing succeeded (or model_dir does not exist); a listing the storage keeps failing
    raises storage.ModelDirUnreadableError. (tf.io.gfile.isdir and listdir's own directory check turn any
    error into "not a directory", which would read as "no checkpoint".)
    """
    try:
        names = storage.read(model_dir, "its listing", lambda: _pywrap_file_io.GetChildren(model_dir))
    except tf.errors.NotFoundError:
        return []
    found = []
    for name in names:
        match = _INDEX.match(name.rstrip("/"))
        if match:
            prefix = os.path.join(model_dir, match.group(1))
            found.append((int(match.group(2)), match.group(1).startswith("ckpt"), prefix))
    return [prefix for _, _, prefix in sorted(found)]


def problem(prefix: str) -> str | None:
    """Why `prefix` is not a complete, readable checkpoint (a short phrase), or None when it is.

    Reads the index (a truncated or garbage one does not parse) and checks that every data shard is
    there and that the shards hold as many bytes as the index's tensors need (truncated data). Bit
    flips inside data of the right size are found by the checksums when restore() reads the values.
    """
    where = os.path.dirname(prefix)
    try:
        reader = py_checkpoint_reader.NewCheckpointReader(prefix)
    except (tf.errors.OpError, ValueError):
        # Damaged, absent, or the storage failing? The reader's errors do not say: read the index file itself
        # (retried while the storage fails), then give the reader a second chance.
        try:
            storage.read(where, f"{prefix}.index", lambda: file_io.read_file_to_string(prefix + ".index", True))
        except tf.errors.NotFoundError:
            return "no .index file"
        try:
            reader = py_checkpoint_reader.NewCheckpointReader(prefix)
        except (tf.errors.OpError, ValueError) as err:
            return f"unreadable index ({first_line(err)})"
    shards = storage.read(where, f"checkpoint {prefix}'s data files", lambda: data_files(prefix))
    counts = {int(_SHARD.search(path).group(2)) for path in shards}
    if len(counts) != 1:
        return "no data file" if not counts else "data files of two different saves"
    total = counts.pop()
    present = {int(_SHARD.search(path).group(1)) for path in shards}
    if present != set(range(total)):
        return f"data shard(s) {sorted(set(range(total)) - present)} of {total} missing"
    stored = storage.read(where, f"checkpoint {prefix}'s data files",
                          lambda: sum(tf.io.gfile.stat(path).length for path in shards))
    needed, variable_size = _data_bytes(reader)
    if stored < needed or (stored != needed and not variable_size):
        return f"data files hold {stored} bytes, the index describes {needed}"
    return None


def data_files(prefix: str) -> list[str]:
    """The data shards present for a checkpoint prefix."""
    return tf.io.gfile.glob(prefix + ".data-?????-of-?????")


def _data_bytes(reader) -> tuple[int, bool]:
    """Bytes the index's tensors take in the data files, and whether some have variable size (strings)."""
    shapes = reader.get_variable_to_shape_map()
    needed, variable_size = 0, False
    for name, dtype in reader.get_variable_to_dtype_map().items():
        if dtype == tf.string:
            variable_size = True
            continue
        count = 1
        for dim in shapes[name]:
            count *= dim
        needed += count * dtype.size
    return needed, variable_size


def remove(prefix: str) -> None:
    """Deletes a checkpoint's files (index, data shards, and a tf.estimator `.meta` if any)."""
    with deprecation.silence():  # deprecated in favour of plain file deletes, which would miss `.meta` files
        checkpoint_management.remove_checkpoint(prefix)


def remove_leftovers(model_dir: str) -> list[str]:
    """Deletes what killed saves left in model_dir (temp files and folders); returns their paths."""
    if not tf.io.gfile.isdir(model_dir):
        return []
    removed = []
    for name in tf.io.gfile.listdir(model_dir):
        name = name.rstrip("/")
        if not _LEFTOVER.search(name):
            continue
        path = os.path.join(model_dir, name)
        try:
            if tf.io.gfile.isdir(path):
                tf.io.gfile.rmtree(path)
            else:
                tf.io.gfile.remove(path)
            removed.append(path)
        except tf.errors.NotFoundError:
            pass  # gone already
    return removed


def fsync(paths: list[str], directory: str) -> None:
    """Flushes files and then their directory to stable storage, on local paths (Drive's FUSE mount too).

    gs:// objects are durable once written; other remote filesystems are left to themselves. A filesystem
    that cannot fsync (EINVAL/ENOTSUP, some FUSE mounts for folders) is skipped: saving must not fail there.
    """
    if not is_local(directory):
        return
    for path in [*paths, directory]:
        local = path.removeprefix("file://")
        try:
            fd = os.open(local, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError as err:
            if err.errno not in (errno.EINVAL, errno.ENOTSUP, errno.ENOSYS, errno.EBADF):
                raise
        finally:
            os.close(fd)


def first_line(err: Exception) -> str:
    """The first line of an error's message: TensorFlow's can run to many lines."""
    text = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", getattr(err, "message", None) or str(err)).strip()
    return text.splitlines()[0] if text else type(err).__name__
