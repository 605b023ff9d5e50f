"""A Keras model's object-based checkpoint layout as tf.estimator 2.15 wrote it (checkpoint_format='checkpoint').

2.15's Keras (tf_keras 2.x) tracked a Functional or Sequential model's layers that have weights as
`layer_with_weights-N` (nested models the same way, inside), a layer's weights by the names given to
add_weight (`kernel`), sublayers by attribute (`cell` of an RNN, MultiHeadAttention's private `_query_dense`),
and a compiled Keras optimizer as `optimizer` with its hyperparameters in variables (`optimizer/learning_rate`,
full name `training/Adam/learning_rate`) and slots named `m`, `v`, `rms`, ...; a tf.compat.v1 optimizer sat inside
tf_keras's TFOptimizer (`optimizer/optimizer`) with TF1's slot names. Both Keras 3 and tf_keras models
are laid out so (keys checked against real 2.15 checkpoints in tests/).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Mapping
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from tensorflow.python.trackable import trackable_utils

from estimators.checkpoint.object_keys import OptimizerKeys
from estimators.keras.weights import variable_of

# Keras optimizer class -> (2.15's legacy class name, its hyperparameter variables, {Keras 3 slot: 2.15 slot})
_KERAS_OPTIMIZERS = {
    "SGD": ("SGD", ("learning_rate", "decay", "momentum"), {"momentum": "momentum"}),
    "Adam": ("Adam", ("learning_rate", "decay", "beta_1", "beta_2"),
             {"momentum": "m", "velocity": "v", "velocity_hat": "vhat"}),
    "RMSprop": ("RMSprop", ("learning_rate", "decay", "rho", "momentum"),
                {"velocity": "rms", "average_gradient": "mg", "momentum": "momentum"}),
    "Adagrad": ("Adagrad", ("learning_rate", "decay"), {"accumulator": "accumulator"}),
    "Ftrl": ("Ftrl", ("learning_rate", "decay", "learning_rate_power", "l1_regularization_strength",
                      "l2_regularization_strength", "beta"),  # Keras 2 kept l2_shrinkage in no variable
             {"accumulator": "accumulator", "linear": "linear"}),
    "Adadelta": ("Adadelta", ("learning_rate", "decay", "rho"),
                 {"accumulated_grad": "accum_grad", "accumulated_delta_var": "accum_var"}),
}
_TF_KERAS_SLOTS = {"m": "m", "v": "v", "vhat": "vhat", "velocity": "rms"}  # newer tf_keras optimizers' slot names
# The engine's TF1 slot suffixes for a Keras optimizer's slots, in order (tf2/naming.py's tf1_slot_name)
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


def layout_problem(model: Any, layer_class: type) -> str | None:
    """Why 2.15's object-based layout of `model` (its weights, its compiled optimizer's state) is not reproduced
    here; None when it is. The default checkpoint_format is 'checkpoint' only then."""
    if not model.weights:
        return "the model has no weights yet (not built), so its layout cannot be checked"
    optimizer = getattr(model, "optimizer", None)
    inner = getattr(optimizer, "optimizer", None)  # tf_keras's TFOptimizer around a tf.compat.v1 optimizer
    if isinstance(inner, tf.compat.v1.train.Optimizer):
        kind = type(inner).__name__
        if kind not in (*_V1_SLOTS, "RMSPropOptimizer", "GradientDescentOptimizer"):
            return f"2.15's keys for the slots of a tf.compat.v1 {kind} are not known here"
    elif type(optimizer).__name__ not in _KERAS_OPTIMIZERS:
        return f"2.15's keys for the state of a {type(optimizer).__name__} optimizer are not known here"
    elif any(base.__name__ == "OptimizerV2" for base in type(optimizer).__mro__):
        return "a tf_keras legacy optimizer's slots and hyperparameter variables are not laid out as 2.15's here"
    else:
        config = optimizer.get_config()
        extra = [name for name in ("use_ema", "gradient_accumulation_steps") if config.get(name)]
        if extra:
            return f"the optimizer's {' and '.join(extra)} state has no place in 2.15's layout"
    try:
        weight_paths(model, layer_class)
    except ValueError as err:
        return str(err)
    return None


def weight_paths(model: Any, layer_class: type) -> list[tuple[Any, str]]:
    """(tf.Variable, object path) for every weight of a Functional or Sequential model, as 2.15 reached it.

    2.15 keyed a variable by its first path in a breadth-first walk of the object graph (children in the order
    they were tracked). A weight no path reaches (its name reused by a later weight of the layer and no
    attribute holding it) is refused: 2.15 would have left it out of the checkpoint.
    """
    found: dict[int, tuple[Any, str]] = {}
    seen = {id(model)}
    queue: deque[tuple[Any, str]] = deque([(model, "")])
    while queue:
        node, path = queue.popleft()
        for local, child in _children(node, layer_class):
            child_path = f"{path}{trackable_utils.escape_local_name(str(local))}"
            if _is_variable(child):
                variable = variable_of(child)
                found.setdefault(id(variable), (variable, child_path))
            elif id(child) not in seen and (isinstance(child, layer_class) or _is_container(child)):
                seen.add(id(child))
                queue.append((child, child_path + "/"))
    _check_all_placed(model, layer_class, found)
    return list(found.values())


def _children(node: Any, layer_class: type) -> list[tuple[Any, Any]]:
    """(local name, object) of what 2.15's tf.keras tracked under `node`, in tracking order."""
    if _is_network(node):
        return [(f"layer_with_weights-{index}", layer)
                for index, layer in enumerate(layer for layer in node.layers if layer.weights)]
    if isinstance(node, Mapping):
        return list(node.items())
    if isinstance(node, (list, tuple)):
        return list(enumerate(node))
    if hasattr(node, "_trackable_children") and not isinstance(node, keras.layers.Layer):  # tf_keras: its own tracking
        return list(node._trackable_children(save_type="checkpoint").items())  # noqa: SLF001
    return _keras3_children(node, layer_class)


def _keras3_children(layer: Any, layer_class: type) -> list[tuple[str, Any]]:
    """A Keras 3 layer's children as tf.keras tracked the same layer's: each add_weight name (a later weight of
    the same name taking the entry), then the attributes the layer set itself, private ones included."""
    named: dict[str, Any] = {}
    for weight in _own_weights(layer):
        named[_short_name(weight)] = weight
    internal = _keras_internal_attributes(layer_class)
    attributes = [(name, value) for name, value in vars(layer).items()
                  if not name.startswith("_self_") and name not in internal]
    return [*named.items(), *attributes]


@functools.cache
def _keras_internal_attributes(layer_class: type) -> frozenset[str]:
    """The attributes a bare Keras Layer sets (its sublayer and variable lists, tracker, ...): Keras's own
    bookkeeping, which tf.keras set with tracking off; `_self_*` ones are TensorFlow's trackable bookkeeping."""
    return frozenset(vars(layer_class(name="bookkeeping")))


def _check_all_placed(model: Any, layer_class: type, found: Mapping[int, Any]) -> None:
    for layer in model._flatten_layers(include_self=True, recursive=True):  # noqa: SLF001 - nested ones too
        for weight in _own_weights(layer) if isinstance(layer, layer_class) else ():
            if id(variable_of(weight)) not in found:
                raise ValueError(
                    f"checkpoint_format='checkpoint' cannot place weight {_short_name(weight)!r} of layer "
                    f"{layer.name!r}: 2.15's object graph had no path to it (it keyed a weight by its add_weight "
                    "name, so of two weights with the same name the first is reached only through an attribute "
                    "holding it) and would have left it out. Give the layer's weights distinct names in "
                    "add_weight, keep each in an attribute of its own, or use checkpoint_format='saver'.")


def _is_variable(value: Any) -> bool:
    return isinstance(value, (tf.Variable, keras.Variable))


def _is_container(value: Any) -> bool:
    return isinstance(value, (list, tuple, Mapping)) and not isinstance(value, str)


def _is_network(layer: Any) -> bool:
    """A nested Functional or Sequential model (tracks its own layers as layer_with_weights-N)."""
    return bool(getattr(layer, "_is_graph_network", False)) or type(layer).__name__ in ("Functional", "Sequential")


def _own_weights(layer: Any) -> list:
    """The weights the layer itself added (not its sublayers'), in the order they were added."""
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
