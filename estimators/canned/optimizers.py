"""The optimizers canned estimators train with, as 2.15 resolved them: a name ('Adagrad', 'Adam', 'Ftrl',
'RMSProp', 'SGD'), an optimizer instance, or a callable returning one.

2.15's canned estimators drove Keras 2 optimizers (OptimizerV2) in a TF1 graph: their slots and
hyperparameters are saved as `training/Adagrad/<variable>/accumulator`, `training/Ftrl/learning_rate`, ...
Here that optimizer is tf_keras's legacy OptimizerV2 (the `legacy` extra), used as it is given.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import tensorflow as tf

# 2.15's names (case-sensitive) -> the tf.compat.v1.train class (V1) and the Keras 2 legacy class (V2).
_V1_CLASSES = {"Adagrad": "AdagradOptimizer", "Adam": "AdamOptimizer", "Ftrl": "FtrlOptimizer",
               "RMSProp": "RMSPropOptimizer", "SGD": "GradientDescentOptimizer"}
_V2_CLASSES = {"Adagrad": "Adagrad", "Adam": "Adam", "Ftrl": "Ftrl", "RMSProp": "RMSprop", "SGD": "SGD"}
_FALLBACK_LEARNING_RATE = 0.05  # 2.15's, for a named class without a default learning rate


def _tf_keras() -> Any:
    try:
        import tf_keras
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("Canned estimators train with Keras 2 optimizers, as tf.estimator 2.15 did: install "
                          "tf_keras (pip install 'tpu-estimators[legacy]', or pip install --no-deps tf_keras).") \
            from err
    return tf_keras


def _legacy_module() -> Any:
    return _tf_keras().optimizers.legacy


def _unsupported_name(name: str, table: dict) -> ValueError:
    return ValueError(f"Unsupported optimizer name: {name}. Supported names are: {tuple(sorted(table))}")


def _is_keras3(optimizer: Any) -> bool:
    """A Keras 3 optimizer (the `keras` package's, not tf_keras's)."""
    try:
        import keras
    except ImportError:  # pragma: no cover - depends on the install
        return False
    return isinstance(optimizer, keras.optimizers.Optimizer)


def _is_keras2_new(optimizer: Any) -> bool:
    """tf_keras's optimizer (2.15's tf.keras.optimizers.Optimizer), which 2.15's graphs refused."""
    return isinstance(optimizer, _tf_keras().optimizers.Optimizer)


def _is_keras2_legacy(optimizer: Any) -> bool:
    return isinstance(optimizer, _legacy_module().Optimizer)


def _keras3_twin_maker(optimizer: Any) -> Callable[[], Any]:
    """A maker of fresh legacy OptimizerV2s of a Keras 3 optimizer's class, with the hyperparameters they share.

    2.15 never met Keras 3 (its tf.keras was Keras 2), and a Keras 3 optimizer cannot update TF1 graph
    variables, so the nearest meaning of such an instance is its Keras 2 twin. Its config is read now, eagerly:
    Keras 3 reads its hyperparameter variables' values, which a model_fn's graph cannot."""
    cls = getattr(_legacy_module(), type(optimizer).__name__, None)
    if cls is None:
        raise ValueError(f"optimizer {type(optimizer).__name__} has no Keras 2 (tf_keras legacy) counterpart; "
                         f"use one of {sorted(_V2_CLASSES)}, a tf_keras.optimizers.legacy optimizer or a "
                         "tf.compat.v1.train optimizer.")
    accepted = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in optimizer.get_config().items() if k in accepted and k != "name"}
    if hasattr(kwargs.get("learning_rate"), "numpy"):
        kwargs["learning_rate"] = float(kwargs["learning_rate"].numpy())
    return lambda: cls(**kwargs)


def _refuse_keras2_new(optimizer: Any) -> ValueError:
    name = type(optimizer).__name__
    return ValueError("Please set your optimizer as an instance of `tf.keras.optimizers.legacy.Optimizer`, e.g., "
                      f"`tf.keras.optimizers.legacy.{name}`.Received optimizer type: {type(optimizer)}.")


def _has_default_learning_rate(cls: type) -> bool:
    parameter = inspect.signature(cls.__init__).parameters.get("learning_rate")
    return parameter is not None and parameter.default is not inspect.Parameter.empty


def get_optimizer_instance(opt: Any, learning_rate: float | None = None) -> Any:
    """2.15's V1 resolution: a tf.compat.v1.train optimizer, from a name (with `learning_rate`), an instance or a
    callable returning one."""
    if isinstance(opt, str):
        if opt not in _V1_CLASSES:
            raise _unsupported_name(opt, _V1_CLASSES)
        if not learning_rate:
            raise ValueError("learning_rate must be specified when opt is string.")
        return getattr(tf.compat.v1.train, _V1_CLASSES[opt])(learning_rate=learning_rate)
    if callable(opt):
        opt = opt()
    if not isinstance(opt, tf.compat.v1.train.Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt


def get_optimizer_instance_v2(opt: Any, learning_rate: float | None = None) -> Any:
    """2.15's V2 resolution: a Keras 2 optimizer, from a name (at `learning_rate`, or the class's own default),
    an instance or a callable returning one. tf_keras's non-legacy optimizer becomes its legacy twin eagerly and
    is refused in a graph, as in 2.15; a Keras 3 one becomes its legacy twin (see _keras3_twin_maker)."""
    if isinstance(opt, str):
        if opt not in _V2_CLASSES:
            raise _unsupported_name(opt, _V2_CLASSES)
        cls = getattr(_legacy_module(), _V2_CLASSES[opt])
        if learning_rate:
            return cls(learning_rate=learning_rate)
        return cls() if _has_default_learning_rate(cls) else cls(learning_rate=_FALLBACK_LEARNING_RATE)
    if callable(opt):
        opt = opt()
    if _is_keras2_new(opt):
        if not tf.executing_eagerly():
            raise _refuse_keras2_new(opt)
        opt = _tf_keras().__internal__.optimizers.convert_to_legacy_optimizer(opt)
    elif _is_keras3(opt):
        if not tf.executing_eagerly():
            raise ValueError(f"A Keras 3 optimizer ({type(opt).__name__}) becomes its Keras 2 twin from its config, "
                             "which is read eagerly: give the estimator the instance itself, not a callable "
                             "returning one, or give a tf_keras.optimizers.legacy optimizer.")
        opt = _keras3_twin_maker(opt)()
    if not _is_keras2_legacy(opt):
        raise ValueError(f"The given object is not a tf.keras.optimizers.Optimizer instance. Given: {opt}")
    return opt


def _for_this_graph(optimizer: Any) -> Any:
    """`optimizer`, or a copy from its config when it already trained in another graph.

    2.15 used an instance as given and failed the second train() ("Cannot set `iterations` ..."): the
    optimizer's step counter was the first graph's global step. The copy keeps its name, so its slots and
    hyperparameters restore from the checkpoint and training goes on as one unbroken run would."""
    used = optimizer.weights
    if not used or used[0].graph is tf.compat.v1.get_default_graph():
        return optimizer
    try:
        return type(optimizer).from_config(optimizer.get_config())
    except Exception as err:
        raise RuntimeError(f"optimizer {optimizer!r} already trained in another graph (an earlier train() call) "
                           "and cannot be rebuilt from its get_config(); pass a callable returning a new "
                           "optimizer instead.") from err


def optimizer_instance(optimizer: Any, learning_rate: float | None) -> Any:
    """The optimizer one model_fn graph trains with: a tf.compat.v1.train optimizer as given (2.15's V1
    estimators took those), otherwise get_optimizer_instance_v2's Keras 2 optimizer."""
    if callable(optimizer):
        optimizer = optimizer()
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        return optimizer
    resolved = get_optimizer_instance_v2(optimizer, learning_rate)
    return _for_this_graph(resolved) if resolved is optimizer else resolved


def _is_optimizer(obj: Any) -> bool:
    return (isinstance(obj, tf.compat.v1.train.Optimizer) or _is_keras2_legacy(obj) or _is_keras2_new(obj)
            or _is_keras3(obj))


def resolve(optimizer: Any, learning_rate: float | None) -> Callable[[], Any]:
    """Checks `optimizer` at construction and returns a maker of the optimizer for each graph (each train() call
    builds one). A name or a callable gives a new optimizer per graph; an instance is used as it is."""
    if isinstance(optimizer, str):
        get_optimizer_instance_v2(optimizer, learning_rate)  # an unknown name fails here, not at the first train()
    elif _is_keras3(optimizer):
        return _keras3_twin_maker(optimizer)
    elif _is_keras2_new(optimizer):
        raise _refuse_keras2_new(optimizer)  # what 2.15 raised at train(): canned model_fns run in a graph
    elif not callable(optimizer) and not _is_optimizer(optimizer):
        raise ValueError(f"The given object is not a tf.keras.optimizers.Optimizer instance. Given: {optimizer}")
    return lambda: optimizer_instance(optimizer, learning_rate)
