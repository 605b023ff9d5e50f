"""Checks model_dir before training or evaluation starts, so a bad one fails in a line, not after a loop."""

from __future__ import annotations

import os
import uuid

import tensorflow as tf


class ModelDirError(ValueError):
    """model_dir is a file, cannot be created, or cannot be written; the message names it and the fix."""


def check_model_dir(model_dir: str, write: bool) -> None:
    """Raises ModelDirError when model_dir is a file or (with write) cannot be created and written.

    The write test creates and deletes one empty file: what a failing run leaves is what was there
    before (and the folder itself, which training would have created anyway).
    """
    try:
        if tf.io.gfile.exists(model_dir) and not tf.io.gfile.isdir(model_dir):
            raise ModelDirError(f"model_dir {model_dir!r} is a file, not a folder: point model_dir at a folder "
                                "(it is created when missing).")
        if not write:
            return
        tf.io.gfile.makedirs(model_dir)
        probe = os.path.join(model_dir, f".write-test-{uuid.uuid4().hex}")
        with tf.io.gfile.GFile(probe, "w") as f:
            f.write("")
        tf.io.gfile.remove(probe)
    except (tf.errors.OpError, OSError) as err:
        reason = getattr(err, "message", None) or str(err) or type(err).__name__
        raise ModelDirError(f"model_dir {model_dir!r} cannot be written ({reason.strip()}): point model_dir at a "
                            "folder you can write to (for gs://, a bucket that exists and you may write).") from None
