"""A Keras model's inputs and outputs by name: input_fn's features and labels in the model's structure.

model_to_estimator's model_fn gets features and labels as tf.estimator 2.15's Keras model_fn got
them (keras_lib._convert_estimator_io_to_keras): a tensor, a list, or a dict keyed by the model's
input (output) names, extra keys allowed; `{"features": ..., "sample_weights": ...}` carries sample
weights. Inputs are named by their InputLayers (`keras.Input(name=...)`), outputs by the layers
that produce them (a Sequential's by its last layer), or by the keys of a model built on dicts.
A dict missing keys is a FormattedKeyError, 2.15's KeyError (and a ValueError).

Keras 2 named a Sequential's input after its first layer (`dense_input` for
`Sequential([Dense(..., input_shape=(4,))])`, or built by fit), and 2.15 programs key their features
so; Keras 3 names that input `input_layer[_N]`. For such a Keras 3 Sequential the Keras 2 name is
accepted as well (`input_aliases`). A tf_keras (Keras 2) model keeps Keras 2's own names.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any

import keras
import tensorflow as tf

from estimators.keras.errors import FormattedKeyError

SAMPLE_WEIGHT_KEYS = frozenset({"features", "sample_weights"})
_KERAS3_DEFAULT_INPUT_NAME = re.compile(r"input_layer(_\d+)?")


def _input_layer_name(tensor: Any) -> str:
    history = getattr(tensor, "_keras_history", None)
    operation = getattr(history, "operation", None)
    return getattr(operation, "name", None) or tensor.name


@dataclass(frozen=True)
class ModelStructure:
    """The names and nesting of a built Keras model's inputs and outputs (read once, eagerly)."""

    input_names: tuple[str, ...] | None  # None: the model has no inputs yet (a Sequential without Input)
    input_specs: tuple[tf.TensorSpec, ...] | None
    inputs_are_dict: bool
    output_names: tuple[str, ...]
    outputs_are_dict: bool
    outputs_are_list: bool
    keras_output_names: tuple[str, ...] | None  # what Keras's compile() names per-output metrics by
    input_aliases: dict = field(default_factory=dict)  # {Keras 2's name: the input's name} (see the module doc)
    subclassed: bool = False  # a subclassed model: inputs and outputs by position (see subclassed_model)

    @classmethod
    def of(cls, model: Any) -> ModelStructure:
        if is_subclassed(model):
            return cls.subclassed_model()
        inputs = getattr(model, "inputs", None) if model.built else None
        structure = getattr(model, "input", None) if inputs else None
        inputs_are_dict = isinstance(structure, dict)
        if inputs_are_dict:
            names = tuple(structure)
            tensors = [structure[name] for name in names]
        elif inputs:
            tensors = list(inputs)
            names = tuple(_input_layer_name(t) for t in tensors)
        else:
            names, tensors = None, []
        specs = tuple(tf.TensorSpec(t.shape, t.dtype, name) for name, t in zip(names or (), tensors, strict=True))

        outputs = getattr(model, "output", None) if inputs else None
        keras_names = getattr(model, "output_names", None)
        if isinstance(outputs, dict):
            output_names = tuple(outputs)
        elif keras_names:
            output_names = tuple(keras_names)
        else:  # a Sequential: named by its last layer, as Keras 2 named it
            output_names = (model.layers[-1].name,) if model.layers else ("output",)
        return cls(names, specs or None, inputs_are_dict, output_names, isinstance(outputs, dict),
                   isinstance(outputs, (list, tuple)), tuple(keras_names) if keras_names else None,
                   _keras2_input_aliases(model, names))

    @classmethod
    def subclassed_model(cls) -> ModelStructure:
        """A subclassed model's structure, as 2.15 took it: its inputs and outputs are known only by position,
        named `input_1`, `input_2`, ... and `output_1`, `output_2`, ... (keras_lib's names for them); dict
        features are handed to the model as they are, dict labels are taken in `output_N` order."""
        return cls(None, None, False, (), False, False, None, {}, subclassed=True)

    # -- features -> model inputs ----------------------------------------------------------------
    def inputs(self, features: Any) -> tuple[Any, Any]:
        """(what to call the model on, sample weights or None) for input_fn's features."""
        sample_weight = None
        if isinstance(features, dict) and set(features) == SAMPLE_WEIGHT_KEYS:
            features, sample_weight = features["features"], features["sample_weights"]
        if features is None:
            raise ValueError("model_to_estimator's model needs features; input_fn returned none.")
        if self.subclassed:
            return features, sample_weight
        if self.input_names is None:
            if isinstance(features, dict):
                raise ValueError(
                    "The Keras model has no Input layer, so dict features cannot be matched to its inputs; "
                    "give it keras.Input(shape, name=...) or have input_fn return a tensor.")
            return features, sample_weight
        if isinstance(features, dict):
            for alias, name in self.input_aliases.items():
                if name not in features and alias in features:
                    features = {**features, name: features[alias]}
        if self.inputs_are_dict:
            if not isinstance(features, dict) and len(self.input_names) == 1:
                features = {self.input_names[0]: features}
            return {name: value for name, value in zip(self.input_names, _pick(features, self.input_names,
                                                                                "features", "inputs"),
                                                        strict=True)}, sample_weight
        values = _pick(features, self.input_names, "features", "inputs")
        return (values[0] if len(values) == 1 else values), sample_weight

    # -- model outputs -> predictions, labels -> targets -------------------------------------------
    def predictions(self, outputs: Any) -> dict:
        """The model's outputs keyed by output name (tf.estimator 2.15's predictions dict)."""
        if isinstance(outputs, dict):
            return dict(outputs)
        flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if self.subclassed:
            return {name: value for name, value in zip(_positional("output", len(flat)), flat, strict=True)}
        if len(flat) != len(self.output_names):
            raise ValueError(f"The model returned {len(flat)} outputs for its {len(self.output_names)} output "
                             f"names {list(self.output_names)}.")
        return dict(zip(self.output_names, flat, strict=True))

    def targets(self, labels: Any, outputs: Any) -> Any:
        """input_fn's labels in the structure of the model's outputs (what its compiled loss takes)."""
        if labels is None:
            raise ValueError("Training and evaluating a Keras model need labels; input_fn returned features only.")
        names = self.output_names
        if self.subclassed:
            names = tuple(_positional("output", len(labels) if isinstance(labels, (dict, list, tuple)) else 1))
        if isinstance(outputs, dict):
            if not isinstance(labels, dict) and len(names) == 1:
                return {names[0]: labels}
            return dict(zip(names, _pick(labels, names, "labels", "outputs"), strict=True))
        values = _pick(labels, names, "labels", "outputs")
        if isinstance(outputs, (list, tuple)):
            return list(values)
        return values[0]


def _positional(what: str, count: int) -> list[str]:
    return [f"{what}_{index}" for index in range(1, count + 1)]


def is_subclassed(model: Any) -> bool:
    """A model of a Model subclass whose layers its own call() connects (no Functional graph, not a Sequential)."""
    if isinstance(model, keras.Model):
        from keras.src.models.functional import Functional

        return not isinstance(model, (keras.Sequential, Functional))
    tf_keras = sys.modules.get("tf_keras")  # a tf_keras model exists only when tf_keras is loaded
    return (tf_keras is not None and isinstance(model, tf_keras.Model) and not model._is_graph_network  # noqa: SLF001
            and not isinstance(model, tf_keras.Sequential))


def _keras2_input_aliases(model: Any, names: tuple[str, ...] | None) -> dict:
    """{'<first layer>_input': input name} for a Keras 3 Sequential whose one input Keras 3 named itself."""
    if not (isinstance(model, keras.Sequential) and names and len(names) == 1 and model.layers):
        return {}
    if not _KERAS3_DEFAULT_INPUT_NAME.fullmatch(names[0]):
        return {}
    return {f"{model.layers[0].name}_input": names[0]}


def _pick(values: Any, names: tuple[str, ...], what: str, order_name: str) -> list:
    """values (a dict by name, a list, or one tensor) as a list in `names`' order."""
    if isinstance(values, dict):
        missing = [name for name in names if name not in values]
        if missing:
            raise FormattedKeyError(  # a KeyError as 2.15's, and a ValueError
                f"The dictionary passed into {what} does not cover the {order_name} of the Keras model.\n"
                f"\tExpected keys: {sorted(names)}\n\t{what} keys: {sorted(map(str, values))}\n"
                f"\tMissed keys: {missing}\n"
                f"Key {what} by the model's {order_name} names (keras.Input(name=...) / the output layers' names).")
        return [values[name] for name in names]
    if isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise ValueError(f"{what} is a list of {len(values)} tensors; the Keras model has {len(names)} "
                             f"{order_name} ({list(names)}).")
        return list(values)
    if len(names) != 1:
        raise ValueError(f"{what} is a single tensor; the Keras model has {len(names)} {order_name} "
                         f"({list(names)}): pass a dict keyed by those names.")
    return [values]
