"""A Keras model's object-based checkpoint layout as tf.estimator 2.15 wrote it (checkpoint_format='checkpoint').

2.15's Keras (tf_keras 2.x) tracked a Functional or Sequential model's layers that have weights as
`layer_with_weights-N` (nested models the same way, inside), a layer's weights by the names given to
add_weight (`kernel`), sublayers by attribute (`cell` of an RNN), and a compiled Keras optimizer as
`optimizer` with its hyperparameters in variables (`optimizer/learning_rate`, full name
`training/Adam/learning_rate`) and slots named `m`, `v`, `rms`, ...; a tf.compat.v1 optimizer sat inside
tf_keras's TFOptimizer (`optimizer/optimizer`) with TF1's slot names. Both Keras 3 and tf_keras models
are laid out so (keys checked against real 2.15 checkpoints in tests/).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from estimators.checkpoint.object_keys import OptimizerKeys
from estimators.keras_weights import variable_of

# Keras optimizer class -> (2.15's legacy class name, its hyperparameter variables, {Keras 3 slot: 2.15 slot})
_KERAS_OPTIMIZERS = {
    "SGD": ("SGD", ("learning_rate", "decay", "momentum"), {"momentum": "momentum"}),
    "Adam": ("Adam", ("learning_rate", "decay", "beta_1", "beta_2"),
             {"momentum": "m", "velocity": "v", "velocity_hat": "vhat"}),
    "RMSprop": ("RMSprop", ("learning_rate", "decay", "rho", "momentum"),
                {"velocity": "rms", "average_gradient": "mg", "momentum": "momentum"}),
    "Adagrad": ("Adagrad", ("learning_rate", "decay"), {"accumulator": "accumulator"}),
    "Ftrl": ("Ftrl", ("learning_rate", "decay", "learning_rate_power", "l1_regularization_strength",
                      "l2_regularization_strength", "l2_shrinkage_regularization_strength", "beta"),
             {"accumulator": "accumulator", "linear": "linear"}),
    "Adadelta": ("Adadelta", ("learning_rate", "decay", "rho"),
                 {"accumulated_grad": "accum_grad", "accumulated_delta_var": "accum_var"}),
}
_TF_KERAS_SLOTS = {"m": "m", "v": "v", "vhat": "vhat", "velocity": "rms"}  # newer tf_keras optimizers' slot names
# The engine's TF1 slot suffixes for a Keras optimizer's slots, in order (runtime/naming.py's tf1_slot_name)
_TF1_SLOT_ORDER = {
    "SGD": ("Momentum", ["momentum"]),
    "Adam": ("Adam", ["momentum", "velocity", "velocity_hat"]),
    "Adagrad": ("Adagrad", ["accumulator"]),
    "Ftrl": ("Ftrl", ["accumulator", "linear"]),
    "Adadelta": ("Adadelta", ["accumulated_grad", "accumulated_delta_var"]),
}
# tf.compat.v1.train optimizers: the slots TF1 created, in order (named <var>/<Name>, <var>/<Name>_1, ...)
_V1_SLOTS = {
    "AdamOptimizer": ["m", "v"], "MomentumOptimizer": ["momentum"], "AdagradOptimizer": ["accumulator"],
    "FtrlOptimizer": ["accum", "linear"], "AdadeltaOptimizer": ["accum", "accum_update"],
    "ProximalAdagradOptimizer": ["accumulator"],
}
_V1_NON_SLOTS = {"AdamOptimizer": ("beta1_power", "beta2_power")}


def weight_paths(model: Any, layer_class: type) -> list[tuple[Any, str]]:
    """(tf.Variable, object path) for every weight of a Functional or Sequential model, first path first."""
    found: dict[int, tuple[Any, str]] = {}
    _walk_model(model, "", layer_class, found)
    return list(found.values())


def _walk_model(model: Any, prefix: str, layer_class: type, found: dict) -> None:
    index = 0
    for layer in model.layers:
        if not layer.weights:
            continue
        path = f"{prefix}layer_with_weights-{index}"
        index += 1
        if _is_network(layer):
            _walk_model(layer, path + "/", layer_class, found)
        else:
            _walk_layer(layer, path, layer_class, found)


def _walk_layer(layer: Any, path: str, layer_class: type, found: dict) -> None:
    for weight in _own_weights(layer):
        variable = variable_of(weight)
        found.setdefault(id(variable), (variable, f"{path}/{_short_name(weight)}"))
    for attribute, value in vars(layer).items():
        if attribute.startswith("_"):
            continue
        items = [(attribute, value)] if isinstance(value, layer_class) else \
            [(f"{attribute}/{i}", item) for i, item in enumerate(value) if isinstance(item, layer_class)] \
            if isinstance(value, (list, tuple)) else []
        for local, sublayer in items:
            _walk_layer(sublayer, f"{path}/{local}", layer_class, found)


def _is_network(layer: Any) -> bool:
    """A nested Functional or Sequential model (tracks its own layers as layer_with_weights-N)."""
    return bool(getattr(layer, "_is_graph_network", False)) or type(layer).__name__ in ("Functional", "Sequential")


def _own_weights(layer: Any) -> list:
    """The weights the layer itself added (not its sublayers')."""
    if hasattr(layer, "_trainable_weights"):  # tf_keras
        return list(layer._trainable_weights) + list(layer._non_trainable_weights)  # noqa: SLF001
    return list(layer._trainable_variables) + list(layer._non_trainable_variables)  # noqa: SLF001


def _short_name(weight: Any) -> str:
    """The name the weight was added under (`kernel`), as tf_keras tracked it."""
    return weight.name.split(":")[0].rpartition("/")[2]


def optimizer_keys(optimizer: Any, v1_optimizer: Any = None) -> OptimizerKeys:
    """Where 2.15 put the compiled optimizer's state, for the engine's slot names of `optimizer`."""
    if v1_optimizer is not None:
        kind = type(v1_optimizer).__name__
        slots = _V1_SLOTS.get(kind, [])
        if kind == "RMSPropOptimizer":
            slots = ["rms", *(["mg"] if getattr(v1_optimizer, "_centered", False) else []), "momentum"]
        base = v1_optimizer.get_name()
        return OptimizerKeys(path="optimizer/optimizer", slots=_numbered(base, slots),
                             non_slots=_V1_NON_SLOTS.get(kind, ()))
    if isinstance(optimizer, (list, tuple)):
        return OptimizerKeys()
    kind = type(optimizer).__name__
    known = _KERAS_OPTIMIZERS.get(kind)
    if known is None:
        return OptimizerKeys()
    legacy, hyper_names, slot_names = known
    config = optimizer.get_config()
    hyper = {name: (0.0 if name == "decay" else config.get(name)) for name in hyper_names}
    hyper = {name: float(value) for name, value in hyper.items() if np.ndim(value) == 0 and
             isinstance(value, (int, float, np.number))}  # a learning-rate schedule is no variable
    if kind == "RMSprop":
        order = ["velocity", *(["average_gradient"] if config.get("centered") else []), "momentum"]
        base = "RMSProp"
    else:
        base, order = _TF1_SLOT_ORDER[kind]
    slots = {suffix: slot_names[slot] for suffix, slot in _numbered(base, order).items()}
    name = getattr(optimizer, "name", kind)  # tf_keras's newer optimizers: `<name>/<slot>/<variable>`
    prefixed = {f"{name}/{slot}/": legacy_slot for slot, legacy_slot in {**_TF_KERAS_SLOTS, **slot_names}.items()}
    if kind == "SGD":  # Keras 2's legacy SGD made momentum slots only for a momentum; tf_keras's makes them anyway
        prefixed = {f"{name}/m/": "momentum"} if hyper.get("momentum") else {}
    return OptimizerKeys(slots=slots, prefixed=prefixed, hyperparameters=hyper, full_name_prefix=f"training/{legacy}/")


def _numbered(base: str, slots: list[str]) -> dict[str, str]:
    """{`Adam`: first, `Adam_1`: second, ...}: TF1's names of an optimizer's slots, in creation order."""
    return {(base if index == 0 else f"{base}_{index}"): slot for index, slot in enumerate(slots)}
