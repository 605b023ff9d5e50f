"""Checks model_dir before training or evaluation starts, so a bad one fails in a line, not after a loop."""

from __future__ import annotations

import os
import uuid

import tensorflow as tf


class ModelDirError(ValueError):
    """model_dir is a file, cannot be created, or cannot be written; the message names it and the fix."""


def check_model_dir(model_dir: str, write: bool) -> None:
    """Raises ModelDirError when model_dir is a file or (with write) cannot be created and written.

    The write test creates and deletes one empty file, and the folders it had to create unless another
    process wrote into them meanwhile: a run that fails later leaves model_dir as it was (absent if it
    was absent), and the check never deletes what it did not write. Only one process of a job (the chief)
    should check with write: two probing a missing folder at once can remove it under each other.
    """
    try:
        _check_bucket(model_dir)
        if tf.io.gfile.exists(model_dir) and not _is_folder(model_dir):
            raise ModelDirError(f"model_dir {model_dir!r} is a file, not a folder: point model_dir at a folder "
                                "(it is created when missing).")
        if not write:
            return
        created = _topmost_missing(model_dir)
        tf.io.gfile.makedirs(model_dir)
        probe = os.path.join(model_dir, f".write-test-{uuid.uuid4().hex}")
        with tf.io.gfile.GFile(probe, "w") as f:
            f.write("")
        tf.io.gfile.remove(probe)
        if created is not None and not _holds_files(created):
            tf.io.gfile.rmtree(created)
    except (tf.errors.OpError, OSError) as err:
        reason = getattr(err, "message", None) or str(err) or type(err).__name__
        raise ModelDirError(f"model_dir {model_dir!r} cannot be written ({reason.strip()}): point model_dir at a "
                            "folder you can write to (for gs://, a bucket that exists and you may write).") from None


def _is_folder(path: str) -> bool:
    """Whether path is a folder. A failed read raises (tf.io.gfile.isdir answers False to any error, which would
    call a folder that could not be read "a file" or a bucket "missing")."""
    try:
        return tf.io.gfile.stat(path).is_directory
    except tf.errors.NotFoundError:
        return False


def _topmost_missing(path: str) -> str | None:
    """The outermost folder of `path` that does not exist yet (makedirs creates it and those below); None if none."""
    missing = None
    while path and not tf.io.gfile.exists(path):
        missing = path
        parent = os.path.dirname(path.rstrip("/"))
        if parent == path or parent.endswith(":/") or parent.endswith("://"):
            break
        path = parent
    return missing


def _holds_files(folder: str) -> bool:
    """Whether any file lies in `folder` or below (another writer's, since the check removed its own)."""
    return any(names for _, _, names in tf.io.gfile.walk(folder))


def _check_bucket(model_dir: str) -> None:
    """gs://: the bucket must exist (TensorFlow's makedirs in a missing bucket retries for minutes)."""
    if not model_dir.startswith("gs://"):
        return
    bucket = "gs://" + model_dir[len("gs://"):].split("/")[0]
    if not _is_folder(bucket):
        raise ModelDirError(f"model_dir {model_dir!r}: bucket {bucket} does not exist or cannot be read: create it "
                            f"(gcloud storage buckets create {bucket}) or fix the name.")
