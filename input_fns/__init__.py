"""TPUEstimator-style input functions: `get_dataset(name).input_fn(mode, data_dir)(params)`.

Importing the package imports no TensorFlow: the built-in datasets (fashion_mnist, cifar10,
synthetic) are known by name (BUILT_IN) and their modules imported when first asked for, so
main.py can check `--dataset` and answer `--help` before TensorFlow starts. Submodules and
`DatasetSource` still work as attributes.
"""

from __future__ import annotations

import importlib
from typing import Any

from input_fns.errors import DatasetNotFoundError
from input_fns.registry import BUILT_IN, dataset_names, get_dataset, register

__all__ = [
    "BUILT_IN",
    "DatasetNotFoundError",
    "DatasetSource",
    "dataset_names",
    "get_dataset",
    "register",
]

_SUBMODULES = ("augment", "cifar10", "fashion_mnist", "idx", "keras_cache", "pipeline", "safe_pickle", "source",
               "synthetic")


def __getattr__(name: str) -> Any:
    """`input_fns.DatasetSource` and the submodules, imported on first use (some import TensorFlow)."""
    if name == "DatasetSource":
        return importlib.import_module("input_fns.source").DatasetSource
    if name in _SUBMODULES:
        return importlib.import_module(f"input_fns.{name}")
    raise AttributeError(f"module 'input_fns' has no attribute {name!r}")
