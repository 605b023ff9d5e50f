"""Model functions for the TPUEstimator engine: `get_model(name).model_fn`, plus defaults.

Importing the package imports no TensorFlow: the built-in models (cnn for Fashion-MNIST, resnet for
CIFAR-10) are known by name (BUILT_IN) and their modules imported when first asked for, so main.py
can check `--model` and answer `--help` before TensorFlow starts. `model_fns.cnn` and the other
submodules still work as attributes.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from model_fns.registry import BUILT_IN, ModelInfo, get_model, model_names, register

__all__ = ["BUILT_IN", "ModelInfo", "get_model", "model_names", "register"]

_SUBMODULES = ("cnn", "common", "lr_schedules", "resnet")


def __getattr__(name: str) -> ModuleType:
    """`model_fns.cnn` and friends, imported on first use (they import TensorFlow)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"model_fns.{name}")
    raise AttributeError(f"module 'model_fns' has no attribute {name!r}")
