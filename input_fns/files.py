"""Dataset files by path, local or on any TensorFlow filesystem, so `--data_dir=gs://bucket/data` reads like a folder.

Local paths use the os module (no TensorFlow needed to look for them); paths with a scheme (gs://, ...) go
through tf.io.gfile, where a failed read raises instead of reading as "no such file".
"""

from __future__ import annotations

import os


def _remote(path: str) -> bool:
    return "://" in path


def is_file(path: str) -> bool:
    """Whether a file exists at path (False for a folder or nothing; a failed remote read raises)."""
    if not _remote(path):
        return os.path.isfile(path)
    import tensorflow as tf  # only for remote paths: local lookups stay free of TensorFlow's start-up

    try:
        return not tf.io.gfile.stat(path).is_directory
    except tf.errors.NotFoundError:
        return False


def read_bytes(path: str) -> bytes:
    """The whole file."""
    if not _remote(path):
        with open(path, "rb") as f:
            return f.read()
    import tensorflow as tf

    with tf.io.gfile.GFile(path, "rb") as f:
        return f.read()
