"""Name -> DatasetSource registry, so flags like --dataset=cifar10 resolve in one place.

No TensorFlow here: a built-in dataset's module is imported the first time the dataset is asked
for, so its name can be checked, and listed, before TensorFlow starts.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from input_fns.source import DatasetSource

__all__ = ["BUILT_IN", "dataset_names", "get_dataset", "register"]

SourceFactory = Callable[[], "DatasetSource"]

_FACTORIES: dict[str, SourceFactory] = {}
_SOURCES: dict[str, DatasetSource] = {}
# Built-in dataset name -> the module whose import registers it. A new built-in dataset adds a line here.
BUILT_IN: dict[str, str] = {"cifar10": "input_fns.cifar10", "fashion_mnist": "input_fns.fashion_mnist",
                            "synthetic": "input_fns.synthetic"}


def _import_built_in(name: str) -> None:
    """Imports the module registering built-in `name`, unless it is being imported already."""
    module = BUILT_IN.get(name)
    if module is not None and name not in _FACTORIES and module not in sys.modules:
        importlib.import_module(module)


def register(name: str) -> Callable[[SourceFactory], SourceFactory]:
    """Decorator registering a zero-argument factory that builds the DatasetSource called `name`."""

    def decorator(factory: SourceFactory) -> SourceFactory:
        _import_built_in(name)  # so a built-in name is taken before its module happens to be imported
        if name in _FACTORIES:
            raise ValueError(f"Dataset {name!r} is already registered.")
        _FACTORIES[name] = factory
        return factory

    return decorator


def get_dataset(name: str) -> DatasetSource:
    """Return the registered source; unknown names raise ValueError listing the choices."""
    _import_built_in(name)
    if name not in _FACTORIES:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {dataset_names()}.")
    if name not in _SOURCES:
        source = _FACTORIES[name]()
        if source.name != name:
            raise ValueError(f"Factory registered as {name!r} built a source named {source.name!r}.")
        _SOURCES[name] = source
    return _SOURCES[name]


def dataset_names() -> list[str]:
    """Registered and built-in dataset names, sorted (imports nothing)."""
    return sorted(set(_FACTORIES) | set(BUILT_IN))
