"""Which signatures an export has: tf.estimator 2.15's rules from export_outputs and receivers.

- No export_outputs: one PredictOutput of the predictions, under "serving_default".
- One export output under another name: it is also served as "serving_default".
- Several: one of them must be named "serving_default".
- Every export output gives a signature over the receiver tensors, named by its key, and one
  more per receiver_tensors_alternatives group, named "<group>:<key>".
- A signature that cannot be served (a classify/regress signature without a single string input,
  or outputs that need an input the signature does not take) is left out with a log line.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from estimators import log as logging
from estimators.export.outputs import ExportOutput, PredictOutput, SignatureParts
from estimators.export.receivers import DEFAULT_RECEIVER_KEY

DEFAULT_KEY = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY


def export_outputs_for_predict(export_outputs: Any, predictions: Any) -> dict:
    """model_fn's export_outputs checked, with the default serving signature filled in."""
    if export_outputs is None:
        return {DEFAULT_KEY: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be a dict of name -> ExportOutput, got {export_outputs!r}.")
    for key, value in export_outputs.items():
        if not isinstance(value, ExportOutput):
            raise TypeError(
                f"export_outputs[{key!r}] must be an estimators.export.PredictOutput, ClassificationOutput or "
                f"RegressionOutput, got {type(value).__name__}."
            )
    export_outputs = dict(export_outputs)
    if len(export_outputs) == 1:
        (only,) = export_outputs.values()
        export_outputs.setdefault(DEFAULT_KEY, only)
    elif DEFAULT_KEY not in export_outputs:
        raise ValueError(
            f"Multiple export_outputs were provided ({sorted(map(str, export_outputs))}) but none is named "
            f"{DEFAULT_KEY!r}; name the default one tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY."
        )
    return export_outputs


def build_signatures(receiver_tensors: dict, export_outputs: dict, alternatives: dict | None,
                     graph_captures: list) -> dict[str, SignatureParts]:
    """{signature name: its inputs, outputs and method}, servable ones only (the others are logged)."""
    groups = [("", receiver_tensors)]
    for name, group in (alternatives or {}).items():
        groups.append((f"{name or 'None'}:", group if isinstance(group, dict) else {DEFAULT_RECEIVER_KEY: group}))
    signatures: dict[str, SignatureParts] = {}
    excluded: dict[str, str] = {}
    for prefix, group in groups:
        for key, output in export_outputs.items():
            name = f"{prefix}{key or 'None'}"
            try:
                parts = output.signature(group)
                _check_servable(parts, graph_captures)
            except ValueError as err:
                excluded[name] = str(err)
                continue
            signatures[name] = parts
    _log_report(signatures, excluded)
    return signatures


def _check_servable(parts: SignatureParts, graph_captures: list) -> None:
    """ValueError when an output depends on a placeholder the signature does not feed."""
    fed = {t.name for t in parts.inputs.values()}
    captured = {t.name for t in graph_captures}
    stack = list(parts.outputs.values())
    seen: set[str] = set()
    while stack:
        tensor = stack.pop()
        if tensor.name in fed or tensor.name in seen:
            continue
        seen.add(tensor.name)
        op = tensor.op
        if op.type == "Placeholder" and tensor.name not in captured:
            raise ValueError(
                f"outputs {sorted(parts.outputs)} need {op.name!r}, which is not among this signature's inputs "
                f"{sorted(parts.inputs)}."
            )
        stack.extend(op.inputs)
        for control in op.control_inputs:
            stack.extend(control.outputs)


def _log_report(signatures: dict, excluded: dict) -> None:
    by_method: dict[str, list] = {}
    for name, parts in signatures.items():
        by_method.setdefault(parts.method_name.rsplit("/", 1)[-1], []).append(name)
    for method in ("classify", "regress", "predict"):
        logging.info("Signatures INCLUDED in export for %s: %s", method.capitalize(), by_method.get(method) or None)
    for name, reason in excluded.items():
        logging.info("Signature %r EXCLUDED from export (TensorFlow Serving could not serve it): %s", name, reason)
    if not signatures:
        logging.warning("Export includes no signatures!")
    elif DEFAULT_KEY not in signatures:
        logging.warning("Export includes no default signature (%r)!", DEFAULT_KEY)
