"""A graph that holds an Estimator's functions as concrete functions (2.15's export.function._EstimatorWrappedGraph).

2.15 experimented with exporting an Estimator as TF2 functions: model_fn and the serving input
receiver are traced once into one shared graph (TensorFlow's WrappedGraph, whose variables live
outside the functions), with a global step created first so that both can use it.
`wrap_model_fn` gives a concrete function returning the spec's predictions (and train_op when
training) and keeps the EstimatorSpec; `wrap_input_receiver_fn` gives a function from the receiver
tensors to the features (and labels), plus one per alternative receiver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf
from tensorflow.python.eager import wrap_function
from tensorflow.python.framework import func_graph

from estimators.mode_keys import ModeKeys
from estimators.specs import EstimatorSpec

_RECEIVER_FN_NAME = "_input_receiver"
_SINGLE_RECEIVER_NAME = "input"  # a receiver given as one tensor rather than a dict


class EstimatorWrappedGraph(wrap_function.WrappedGraph):
    """A WrappedGraph with a global step, into which model_fn (once) and input receiver fns are traced."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._global_step_read_fn = self.wrap_function(tf.compat.v1.train.get_or_create_global_step, signature=[])
        self._concrete_model_fn = None
        self._estimator_spec: EstimatorSpec | None = None

    @property
    def global_step(self) -> tf.Tensor:
        """The global step's value (read through a function of the graph)."""
        return self._global_step_read_fn()

    @property
    def model_fn(self) -> Any:
        """The concrete model function, once wrap_model_fn has been called."""
        return self._concrete_model_fn

    @property
    def estimator_spec(self) -> EstimatorSpec:
        """The EstimatorSpec model_fn returned while it was traced."""
        if self._concrete_model_fn is None:
            raise ValueError("Please wrap a model function first.")
        return self._estimator_spec

    def wrap_model_fn(self, model_fn: Callable, mode: str, args: Any = None, kwargs: Any = None,
                      signature: Any = None) -> Any:
        """Traces model_fn(*args, **kwargs) for `mode`; the function returns the spec's predictions (and train_op)."""
        if self._concrete_model_fn is not None:
            raise ValueError("`wrap_model_fn` should be only called once per graph.")

        def outputs(*call_args: Any, **call_kwargs: Any) -> Any:
            result = model_fn(*call_args, **call_kwargs)
            if not isinstance(result, EstimatorSpec):
                return result
            if isinstance(result.train_op, tf.Variable):  # assign_add on a resource variable: keep its op, as 2.15
                result = result._replace(train_op=result.train_op.op)
            self._estimator_spec = result
            if result.mode == ModeKeys.TRAIN:
                return {"predictions": result.predictions, "train_op": result.train_op}
            return {"predictions": result.predictions}

        self._concrete_model_fn = self._wrap_function(outputs, args, kwargs, signature, f"model_fn_{mode}")
        return self._concrete_model_fn

    def wrap_input_receiver_fn(self, input_receiver_fn: Callable) -> list[tuple[Any, str | None]]:
        """[(function, receiver name)]: receiver tensors -> features (or (features, labels)); the default
        receiver's name is None, then one per `receiver_tensors_alternatives` entry."""
        made = []

        def features_and_labels() -> Any:
            receiver = input_receiver_fn()
            made.append(receiver)
            labels = getattr(receiver, "labels", None)
            return receiver.features if labels is None else (receiver.features, labels)

        func_graph.func_graph_from_py_func(
            None, self._variable_holder.call_with_variable_creator_scope(features_and_labels), args=None,
            kwargs=None, signature=[], add_control_dependencies=False, func_graph=self.graph)
        receiver = made[0]
        receivers = [(None, receiver.receiver_tensors)]
        receivers += list((getattr(receiver, "receiver_tensors_alternatives", None) or {}).items())
        return [(self._prune(tensors, name), name) for name, tensors in receivers]

    def _prune(self, receiver_tensors: Any, name: str | None) -> Any:
        inputs = _as_receiver_dict(receiver_tensors)
        return self._wrapped_function.prune(
            inputs, self.graph.structured_outputs,
            name=_RECEIVER_FN_NAME if name is None else f"{_RECEIVER_FN_NAME}_{name}",
            input_signature=(None, func_graph.convert_structure_to_signature(inputs)))


def _as_receiver_dict(receiver_tensors: Any) -> dict:
    """Receiver tensors as a dict of plain tensors (a lone tensor is named "input")."""
    for tensor in tf.nest.flatten(receiver_tensors):
        if not isinstance(tensor, tf.Tensor):
            raise ValueError("All receiver tensors must be tensors (composite tensors are not supported).")
    return receiver_tensors if isinstance(receiver_tensors, dict) else {_SINGLE_RECEIVER_NAME: receiver_tensors}


_EstimatorWrappedGraph = EstimatorWrappedGraph  # 2.15's name (export.function._EstimatorWrappedGraph)
