"""Name -> DatasetSource registry, so flags like --dataset=cifar10 resolve in one place."""

from __future__ import annotations

from collections.abc import Callable

from input_fns.source import DatasetSource

__all__ = ["DatasetSource", "dataset_names", "get_dataset", "register"]

SourceFactory = Callable[[], DatasetSource]

_FACTORIES: dict[str, SourceFactory] = {}
_SOURCES: dict[str, DatasetSource] = {}


def register(name: str) -> Callable[[SourceFactory], SourceFactory]:
    """Decorator registering a zero-argument factory that builds the DatasetSource called `name`."""

    def decorator(factory: SourceFactory) -> SourceFactory:
        if name in _FACTORIES:
            raise ValueError(f"Dataset {name!r} is already registered.")
        _FACTORIES[name] = factory
        return factory

    return decorator


def get_dataset(name: str) -> DatasetSource:
    """Return the registered source; unknown names raise ValueError listing the choices."""
    if name not in _FACTORIES:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {dataset_names()}.")
    if name not in _SOURCES:
        source = _FACTORIES[name]()
        if source.name != name:
            raise ValueError(f"Factory registered as {name!r} built a source named {source.name!r}.")
        _SOURCES[name] = source
    return _SOURCES[name]


def dataset_names() -> list[str]:
    """Registered dataset names, sorted."""
    return sorted(_FACTORIES)
