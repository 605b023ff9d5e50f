"""Name -> ModelInfo registry, so a flag like --model=resnet resolves to a model_fn and its defaults.

No TensorFlow here: a built-in model's module (which imports it) is imported the first time the
model is asked for, so its name can be checked, and listed, before TensorFlow starts.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["BUILT_IN", "ModelInfo", "get_model", "model_names", "register"]

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
# Built-in model name -> the module whose import registers it. A new built-in model adds a line here.
BUILT_IN: dict[str, str] = {"cnn": "model_fns.cnn", "resnet": "model_fns.resnet"}


def _import_built_in(name: str) -> None:
    """Imports the module registering built-in `name`, unless it is being imported already."""
    module = BUILT_IN.get(name)
    if module is not None and name not in _MODELS and module not in sys.modules:
        importlib.import_module(module)


def register(
    name: str, default_dataset: str, default_params: Mapping[str, Any], *, image_shape: tuple[int, int, int],
    network: Callable[[dict[str, Any]], Any] | None = None,
) -> Callable[[ModelFn], ModelFn]:
    """Decorator registering a model_fn under `name`; a name can be registered once."""

    def decorator(model_fn: ModelFn) -> ModelFn:
        _import_built_in(name)  # so a built-in name is taken before its module happens to be imported
        if name in _MODELS:
            raise ValueError(f"Model {name!r} is already registered.")
        _MODELS[name] = ModelInfo(name, model_fn, default_dataset, dict(default_params), tuple(image_shape),
                                  network)
        return model_fn

    return decorator


def get_model(name: str) -> ModelInfo:
    """The registered model (with its own copy of default_params); ValueError listing the choices."""
    _import_built_in(name)
    if name not in _MODELS:
        raise ValueError(f"Unknown model {name!r}; choose one of {model_names()}.")
    info = _MODELS[name]
    return dataclasses.replace(info, default_params=dict(info.default_params))


def model_names() -> list[str]:
    """Registered and built-in model names, sorted (imports nothing)."""
    return sorted(set(_MODELS) | set(BUILT_IN))
