"""The optimizers canned estimators train with, as 2.15 resolved them: a name ('Adagrad', 'Adam', 'Ftrl',
'RMSProp', 'SGD') at the estimator's default learning rate, an instance, or a callable returning one.

2.15's canned estimators drove Keras 2 optimizers (OptimizerV2) in a TF1 graph: their slots and
hyperparameters are saved as `training/Adagrad/<variable>/accumulator`, `training/Ftrl/learning_rate`, ...
Here that optimizer is tf_keras's legacy OptimizerV2 (the `legacy` extra). A Keras 3 or tf_keras optimizer
instance is rebuilt as its legacy twin from its config; a tf.compat.v1.train optimizer is used as it is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import tensorflow as tf

_NAMES = {"adagrad": "Adagrad", "adam": "Adam", "ftrl": "Ftrl", "rmsprop": "RMSprop", "sgd": "SGD"}


def _legacy_module() -> Any:
    try:
        import tf_keras
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("Canned estimators train with Keras 2 optimizers, as tf.estimator 2.15 did: install "
                          "tf_keras (pip install 'tpu-estimators[legacy]', or pip install --no-deps tf_keras).") \
            from err
    return tf_keras.optimizers.legacy


def _legacy_twin(optimizer: Any) -> Any:
    """A fresh legacy OptimizerV2 of `optimizer`'s class with the hyperparameters it shares with it."""
    legacy = _legacy_module()
    cls = getattr(legacy, type(optimizer).__name__, None)
    if cls is None:
        raise ValueError(f"optimizer {type(optimizer).__name__} has no Keras 2 (tf_keras legacy) counterpart; "
                         f"use one of {sorted(_NAMES.values())} or a tf.compat.v1.train optimizer.")
    config = optimizer.get_config()
    accepted = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in config.items() if k in accepted and k != "name"}
    if hasattr(kwargs.get("learning_rate"), "numpy"):
        kwargs["learning_rate"] = float(kwargs["learning_rate"].numpy())
    return cls(**kwargs)


def optimizer_instance(optimizer: Any, learning_rate: float | None) -> Any:
    """A new optimizer for one model_fn call (an OptimizerV2 keeps its slots per graph, and every call
    builds a fresh graph). A name with learning_rate None gets the optimizer's own default rate."""
    if isinstance(optimizer, str):
        name = _NAMES.get(optimizer.lower())
        if name is None:
            raise ValueError(f"Unsupported optimizer name: {optimizer}. Supported names are: "
                             f"{tuple(sorted(_NAMES.values()))}")
        cls = getattr(_legacy_module(), name)
        return cls() if learning_rate is None else cls(learning_rate=learning_rate)
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        return optimizer
    if callable(optimizer) and not hasattr(optimizer, "get_config"):
        return optimizer_instance(optimizer(), learning_rate)
    if hasattr(optimizer, "get_config"):
        return _legacy_twin(optimizer)
    raise ValueError(f"The given object is not an optimizer instance. Given: {optimizer!r}")


def resolve(optimizer: Any, learning_rate: float | None) -> Callable[[], Any]:
    """Checks `optimizer` now (as 2.15's constructors did) and returns a maker of a fresh one per graph."""
    if isinstance(optimizer, str):
        optimizer_instance(optimizer, learning_rate)  # an unknown name fails here, not at the first train()
    return lambda: optimizer_instance(optimizer, learning_rate)
