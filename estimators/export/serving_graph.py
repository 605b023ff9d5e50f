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

from estimators import log as logging
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
    names = _input_names(name, sorted(parts.inputs))
    feeding: dict[str, str] = {}  # tensor name -> the first input that feeds it (a tensor is fed once)
    for key, argument in names.items():
        feeding.setdefault(parts.inputs[key].name, argument)
    feeders = list(feeding.values())
    by_argument = {argument: key for key, argument in names.items()}
    pruned = graph_function.prune(feeds=[parts.inputs[by_argument[a]] for a in feeders], fetches=dict(parts.outputs))

    def signature(**inputs):
        return pruned(*[inputs[a] for a in feeders])

    signature.__name__ = "serving_" + "".join(c if c.isalnum() else "_" for c in name)
    specs = {a: tf.TensorSpec(parts.inputs[k].shape, parts.inputs[k].dtype, name=a) for k, a in names.items()}
    return tf.function(signature, autograph=False).get_concrete_function(**specs)


def _input_names(signature: str, keys: list[str]) -> dict[str, str]:
    """{receiver key: signature input name}: the key itself unless TF2 signatures cannot take it.

    TF2 signature inputs are Python keyword arguments; tf.function would silently rename a key
    such as "image/encoded", so it is renamed here ("image_encoded"), with a warning.
    """
    names = {}
    for key in keys:
        name = key
        if not (key.isascii() and key.isidentifier()):
            name = "".join(c if c.isascii() and c.isalnum() else "_" for c in key)
            name = name if name[:1].isalpha() else "arg_" + name
            logging.warning("Signature %r: input %r is named %r in the SavedModel (TF2 signature inputs are "
                            "Python identifiers; tf.estimator's TF1 signatures kept %r).", signature, key, name, key)
        names[key] = name
    clashes = sorted({n for n in names.values() if list(names.values()).count(n) > 1})
    if clashes:
        raise ValueError(
            f"Signature {signature!r}: receiver keys {sorted(k for k, n in names.items() if n in clashes)} would all "
            f"be named {clashes} in a TF2 SavedModel; rename them to distinct Python identifiers."
        )
    return names
