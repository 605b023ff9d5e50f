"""The serving graph: serving_input_receiver_fn and model_fn (PREDICT) traced as one graph, cut into signatures.

tf.estimator built this graph in a tf.Graph and fed placeholders in a Session. Here the receiver
fn and model_fn run inside `tf.compat.v1.wrap_function` (graph code, so placeholders work), and
each signature is that graph pruned from its input tensors to its output tensors: a concrete
function tf.saved_model.save can write, whose keyword arguments are the receiver tensors' names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.export.outputs import SignatureParts
from estimators.export.receivers import materialize
from estimators.export.signatures import build_signatures, export_outputs_for_predict


def trace_signatures(serving_input_receiver_fn: Callable[[], Any], model_fn_call: Callable[[Any], Any]
                     ) -> tuple[dict, dict[str, str]]:
    """({signature name: concrete function}, {signature name: method name}) for the servable signatures.

    `model_fn_call(features)` returns model_fn's PREDICT spec; it is called once, inside the
    same graph as the receiver fn.
    """
    traced: dict = {}

    def serving_graph() -> None:
        receiver = materialize(serving_input_receiver_fn(), tf.compat.v1.get_default_graph())
        spec = model_fn_call(receiver.features)
        traced["receiver"] = receiver
        traced["export_outputs"] = export_outputs_for_predict(getattr(spec, "export_outputs", None),
                                                              spec.predictions)

    graph_function = tf.compat.v1.wrap_function(serving_graph, signature=[])
    receiver = traced["receiver"]
    parts = build_signatures(receiver.receiver_tensors, traced["export_outputs"],
                             receiver.receiver_tensors_alternatives, graph_function.graph.internal_captures)
    functions = {name: _signature_function(graph_function, name, part) for name, part in parts.items()}
    return functions, {name: part.method_name for name, part in parts.items()}


def _signature_function(graph_function: Any, name: str, parts: SignatureParts) -> Any:
    """The graph pruned to `parts`, called with keyword arguments named as the signature's inputs."""
    keys = sorted(parts.inputs)
    pruned = graph_function.prune(feeds=[parts.inputs[k] for k in keys], fetches=dict(parts.outputs))

    def signature(**inputs):
        return pruned(*[inputs[k] for k in keys])

    signature.__name__ = "serving_" + "".join(c if c.isalnum() else "_" for c in name)
    specs = {k: tf.TensorSpec(parts.inputs[k].shape, parts.inputs[k].dtype, name=k) for k in keys}
    return tf.function(signature, autograph=False).get_concrete_function(**specs)
