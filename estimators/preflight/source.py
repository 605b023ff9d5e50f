"""Where in the user's code something was made: the innermost stack frame outside TensorFlow, Keras and the engine.

Ops built in graph mode keep the Python stack of their creation (`op.traceback`), and an
exception keeps its traceback; either way the frame worth showing is the model_fn's own line.
"""

from __future__ import annotations

import linecache
import os
import sysconfig
from collections.abc import Iterable
from typing import Any

import keras
import tensorflow as tf

import estimators


def _library_folders() -> tuple[str, ...]:
    folders = [os.path.dirname(module.__file__) for module in (tf, keras, estimators)]
    for name in ("tf_keras", "absl", "numpy"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        folders.append(os.path.dirname(module.__file__))
    folders.append(sysconfig.get_paths()["stdlib"])
    return tuple(os.path.realpath(folder) + os.sep for folder in folders)


_LIBRARIES: tuple[str, ...] | None = None


def _is_library(filename: str) -> bool:
    global _LIBRARIES
    if _LIBRARIES is None:
        _LIBRARIES = _library_folders()
    return os.path.realpath(filename).startswith(_LIBRARIES) or filename.startswith("<")


def _shown_path(filename: str) -> str:
    relative = os.path.relpath(filename)
    return filename if relative.startswith("..") else relative


def user_line(frames: Iterable[Any]) -> str | None:
    """"path.py:42 in model_fn: `code`" for the innermost frame outside the libraries, or None.

    `frames` are objects with filename, lineno and name (traceback.FrameSummary, TF's StackFrame).
    """
    found = None
    for frame in frames:
        if not _is_library(frame.filename):
            found = frame
    if found is None:
        return None
    code = linecache.getline(found.filename, found.lineno).strip()
    where = f"{_shown_path(found.filename)}:{found.lineno} in {found.name}"
    return f"{where}: `{code}`" if code else where


def op_line(op: tf.Operation) -> str | None:
    """The user's line that created graph op `op` (see user_line)."""
    try:
        return user_line(op.traceback)
    except (AttributeError, TypeError):  # pragma: no cover - an op without a recorded stack
        return None


def exception_line(err: BaseException) -> str | None:
    """The user's line where `err` was raised or passed through last (see user_line)."""
    import traceback

    return user_line(traceback.extract_tb(err.__traceback__))
