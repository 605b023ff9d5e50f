"""Name -> ModelInfo registry, so a flag like --model=resnet resolves to a model_fn and its defaults."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ModelInfo", "get_model", "model_names", "register"]

ModelFn = Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class ModelInfo:
    """One registered model: its model_fn, the dataset it is meant for, and its default params.

    network(params) builds the model's Keras network alone (for its parameter count), if given.
    """

    name: str
    model_fn: ModelFn
    default_dataset: str
    default_params: dict[str, Any]
    image_shape: tuple[int, int, int]
    network: Callable[[dict[str, Any]], Any] | None = None


_MODELS: dict[str, ModelInfo] = {}


def register(
    name: str, default_dataset: str, default_params: Mapping[str, Any], *, image_shape: tuple[int, int, int],
    network: Callable[[dict[str, Any]], Any] | None = None,
) -> Callable[[ModelFn], ModelFn]:
    """Decorator registering a model_fn under `name`; a name can be registered once."""

    def decorator(model_fn: ModelFn) -> ModelFn:
        if name in _MODELS:
            raise ValueError(f"Model {name!r} is already registered.")
        _MODELS[name] = ModelInfo(name, model_fn, default_dataset, dict(default_params), tuple(image_shape),
                                  network)
        return model_fn

    return decorator


def get_model(name: str) -> ModelInfo:
    """The registered model (with its own copy of default_params); ValueError listing the choices."""
    if name not in _MODELS:
        raise ValueError(f"Unknown model {name!r}; choose one of {model_names()}.")
    info = _MODELS[name]
    return dataclasses.replace(info, default_params=dict(info.default_params))


def model_names() -> list[str]:
    """Registered model names, sorted."""
    return sorted(_MODELS)
