"""Object-based checkpoint keys, as tf.estimator 2.15's model_to_estimator wrote them (checkpoint_format='checkpoint').

2.15 saved a Keras estimator's variables under the paths of the Keras model's object graph (a tf_keras
Model tracking its layers as `layer_with_weights-N`, the optimizer as `optimizer`, the global step as
`estimator_global_step`) with a `_CHECKPOINTABLE_OBJECT_GRAPH` proto whose attributes give each key's
variable name (`full_name`). The engine names variables by their TF1 names; ObjectKeys turns those
names into that layout when saving (keys and proto built with TensorFlow's trackable helpers), and
`full_name_keys` reads any object-based checkpoint back by TF1 name, so either format restores.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2
from tensorflow.python.checkpoint import util as checkpoint_util
from tensorflow.python.trackable import base as trackable_base
from tensorflow.python.trackable import trackable_utils

from estimators.checkpoint import writer
from estimators.checkpoint.files import OBJECT_GRAPH_KEY

VALUE = trackable_base.VARIABLE_VALUE_KEY
GLOBAL_STEP = "global_step"
GLOBAL_STEP_PATH = "estimator_global_step"  # 2.15: model._track_trackable(global_step, 'estimator_global_step')
_Graph = trackable_object_graph_pb2.TrackableObjectGraph


@dataclass(frozen=True)
class OptimizerKeys:
    """Where an optimizer's state went in 2.15's object graph.

    path: the optimizer's object path (`optimizer`; `optimizer/optimizer` for a tf.compat.v1 optimizer inside
    tf_keras's TFOptimizer); slots: the engine's TF1 slot suffix (`Adam_1`) -> 2.15's slot name (`v`);
    prefixed: the same for slots named `<prefix><variable>`;
    hyperparameters: {name: value} saved under the optimizer (Keras 2 kept them in variables);
    full_name_prefix: their variable names' scope (`training/Adam/`); non_slots: engine names of
    variables tracked by the optimizer itself (TF1 Adam's `beta1_power`).
    """

    path: str = "optimizer"
    slots: Mapping[str, str] = field(default_factory=dict)
    prefixed: Mapping[str, str] = field(default_factory=dict)  # tf_keras's `Adam/m/<var>`: {"Adam/m/": "m"}
    hyperparameters: Mapping[str, float] = field(default_factory=dict)
    full_name_prefix: str = ""
    non_slots: tuple[str, ...] = ()


@dataclass
class ObjectCheckpoint:
    """What a save writes: {checkpoint key: variable or numpy constant}, and the object graph proto."""

    values: dict[str, Any]
    graph: bytes
    full_names: dict[str, str]  # checkpoint key -> the variable's TF1 name, for keys in the graph


class ObjectKeys:
    """Maps a Keras estimator's TF1-named variables to 2.15's object-based keys.

    record() is given (tf.Variable, object path) pairs by the Keras model_fn for the model's weights
    (`layer_with_weights-0/kernel`); slots follow their variable's path, the global step is
    `estimator_global_step`, other variables (the engine's own) keep their names, outside the graph.
    """

    def __init__(self, optimizer: OptimizerKeys | None = None):
        self.optimizer = optimizer or OptimizerKeys()
        self._paths: dict[int, str] = {}  # id of a live variable -> its object path

    def record(self, pairs: Iterable[tuple[Any, str]]) -> None:
        """Notes the object path of each model variable, without keeping it alive: a graph-path call's variables
        (and their graph) go when the call ends, and their entries with them (so an id reused is never stale)."""
        for variable, path in pairs:
            key = id(variable)
            if key not in self._paths:
                weakref.finalize(variable, self._paths.pop, key, None)
            self._paths[key] = path

    @property
    def recorded(self) -> bool:
        """Whether the model_fn has placed its weights (it records them in each call)."""
        return bool(self._paths)

    def paths(self, variables: Mapping[str, Any]) -> dict[str, str]:
        """{TF1 name: object path} of the variables the layout places (model weights, slots, step)."""
        placed: dict[str, str] = {}
        for name, variable in variables.items():
            if name == GLOBAL_STEP:
                placed[name] = GLOBAL_STEP_PATH
                continue
            found = self._paths.get(id(writer.tf_variable(variable)))
            if found is not None:
                placed[name] = found
        optimizer = self.optimizer
        for name in variables:
            base, _, suffix = name.rpartition("/")
            slot = optimizer.slots.get(suffix) if base in placed else None
            if slot is None:
                base, slot = next(((name[len(prefix):], slot) for prefix, slot in optimizer.prefixed.items()
                                   if name.startswith(prefix) and name[len(prefix):] in placed), (base, None))
            if name not in placed and slot is not None:
                placed[name] = trackable_utils.slot_variable_key(placed[base], optimizer.path, slot)
            elif name not in placed and name in optimizer.non_slots:
                placed[name] = f"{optimizer.path}/{trackable_utils.escape_local_name(name)}"
        return placed

    def checkpoint(self, variables: Mapping[str, Any]) -> ObjectCheckpoint:
        """The keys, values and object graph of one save of `variables` ({TF1 name: variable})."""
        placed = self.paths(variables)
        values: dict[str, Any] = {}
        full_names: dict[str, str] = {}
        for name, variable in variables.items():
            key = _value_key(placed[name]) if name in placed else name
            values[key] = variable
            if name in placed:
                full_names[key] = name
        hyper = self._hyperparameters() if self._saves_optimizer(variables, placed) else {}
        for path, (value, full_name) in hyper.items():
            values[_value_key(path)] = value
            full_names[_value_key(path)] = full_name
        graph = _object_graph(placed, {path: full for path, (_, full) in hyper.items()},
                              self.optimizer.full_name_prefix)
        return ObjectCheckpoint(values, graph.SerializeToString(), full_names)

    def _saves_optimizer(self, variables: Mapping[str, Any], placed: Mapping[str, str]) -> bool:
        """A training save (more than the model's weights and the step): 2.15 saved the optimizer's state then."""
        return bool(self._paths) and any(name not in placed or ".OPTIMIZER_SLOT" in placed[name] for name in variables)

    def _hyperparameters(self) -> dict[str, tuple[np.ndarray, str]]:
        optimizer = self.optimizer
        return {f"{optimizer.path}/{name}": (np.asarray(value, np.float32), f"{optimizer.full_name_prefix}{name}")
                for name, value in sorted(optimizer.hyperparameters.items())}


def _value_key(path: str) -> str:
    return trackable_utils.checkpoint_key(path, VALUE)


def _object_graph(placed: Mapping[str, str], constants: Mapping[str, str], prefix: str) -> Any:
    """The TrackableObjectGraph of the placed variables ({TF1 name: path}) and constants ({path: full name}).

    A Keras optimizer's slot is named as 2.15's Keras 2 named it (`training/Adam/dense/kernel/m`, `prefix` +
    variable + slot); other variables by their TF1 names (2.15's too).
    Nodes in 2.15's order: the layers, the optimizer, then `estimator_global_step`; slot variables are nodes
    of their own, referenced from the optimizer's node, as TensorFlow's serializer writes them.
    """
    graph = _Graph()
    graph.nodes.add()
    ids: dict[str, int] = {"": 0}

    def node(path: str) -> int:
        if path in ids:
            return ids[path]
        parent, _, local = path.rpartition("/")
        parent_id = node(parent)
        ids[path] = len(graph.nodes)
        graph.nodes.add()
        graph.nodes[parent_id].children.add(node_id=ids[path], local_name=local)
        return ids[path]

    plain = {path: name for name, path in placed.items() if ".OPTIMIZER_SLOT" not in path}
    leaves = {**plain, **constants}
    for path in sorted(leaves, key=lambda p: (p == GLOBAL_STEP_PATH, p.startswith("optimizer"), _natural(p))):
        graph.nodes[node(path)].attributes.add(name=VALUE, full_name=leaves[path], checkpoint_key=_value_key(path))
    slots = [(name, path) for name, path in placed.items() if ".OPTIMIZER_SLOT" in path]
    owner = {name: plain.get(path.partition("/.OPTIMIZER_SLOT/")[0], name) for name, path in slots}
    for name, path in slots:
        variable_path, _, rest = path.partition("/.OPTIMIZER_SLOT/")
        optimizer_path, _, slot_name = rest.rpartition("/")
        if variable_path not in ids:
            continue
        slot_id = len(graph.nodes)
        full_name = f"{prefix}{owner[name]}/{slot_name}" if prefix else name
        graph.nodes.add().attributes.add(name=VALUE, full_name=full_name, checkpoint_key=_value_key(path))
        graph.nodes[node(optimizer_path)].slot_variables.add(
            original_variable_node_id=ids[variable_path], slot_name=slot_name, slot_variable_node_id=slot_id)
    checkpoint_util.add_checkpoint_values_check(graph)
    return graph


def _natural(path: str) -> list:
    """`layer_with_weights-10` after `layer_with_weights-9`."""
    parts = []
    for part in path.split("/"):
        head, _, number = part.rpartition("-")
        parts.append((head, int(number)) if number.isdigit() else (part, -1))
    return parts


def full_name_keys(reader: Any) -> dict[str, str]:
    """{variable name (full_name): checkpoint key} of an object-based checkpoint; {} for a name-based one.

    `reader`: a tf.train.load_checkpoint reader. The same mapping as TensorFlow's
    saver.object_graph_key_mapping, from a reader already open.
    """
    if not reader.has_tensor(OBJECT_GRAPH_KEY):
        return {}
    graph = _Graph()
    graph.ParseFromString(reader.get_tensor(OBJECT_GRAPH_KEY))
    return {attribute.full_name: attribute.checkpoint_key for node in graph.nodes for attribute in node.attributes
            if attribute.full_name}


def graph_saveable(graph: bytes) -> Any:
    """The SaveableObject writing the object graph proto (restored by nothing, as TensorFlow's own)."""
    with tf.device("/cpu:0"):
        tensor = tf.constant(graph, dtype=tf.string)
    return trackable_base.NoRestoreSaveable(tensor=tensor, name=OBJECT_GRAPH_KEY)
