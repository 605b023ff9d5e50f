"""Unpickle numpy-array payloads without executing anything else.

A pickle can call any importable function; this unpickler resolves only the few
globals a plain numpy array needs, so e.g. an `os.system` payload is refused.
"""

from __future__ import annotations

import importlib
import io
import pickle
from typing import Any

import numpy as np

# (module, name) pairs a pickled ndarray genuinely references; numpy 2 renamed core -> _core.
_ALLOWED = frozenset(
    {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }
)


class UnsafePickleError(pickle.UnpicklingError, ValueError):
    """The pickle references a global outside the numpy allow-list; nothing was executed."""


class NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickler whose find_class knows only ndarray, dtype and ndarray's reconstructor."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise UnsafePickleError(f"refusing to unpickle global {module}.{name}: only numpy arrays are allowed")
        if name == "ndarray":
            return np.ndarray
        if name == "dtype":
            return np.dtype
        return _reconstruct()


def loads(data: bytes) -> Any:
    """Unpickle `data` (Python 2 str payloads come back as bytes, as in the CIFAR files)."""
    return NumpyOnlyUnpickler(io.BytesIO(data), encoding="bytes").load()


def _reconstruct() -> Any:
    """numpy's ndarray reconstructor, from wherever this numpy version keeps it."""
    try:
        return importlib.import_module("numpy._core.multiarray")._reconstruct
    except ImportError:  # numpy < 2
        return importlib.import_module("numpy.core.multiarray")._reconstruct
