"""What a TPU rejects inside a traced step: ops XLA has no kernel for, float64, strings, data-dependent shapes.

The step's FuncGraph is walked with the graphs of its tf.cond / tf.while_loop branches. Each
problem is reported where it starts (the op that first makes a float64 tensor, not every op
downstream of it), at the user's line that created the op.
"""

from __future__ import annotations

from collections.abc import Iterator

import tensorflow as tf
from tensorflow.python.framework import kernels

from estimators.preflight.report import ERROR, Finding
from estimators.preflight.source import op_line

XLA_DEVICE = "XLA_CPU_JIT"  # the CPU's XLA kernels: a TPU's (XLA_TPU_JIT) are not registered off a TPU
_STRUCTURAL = {"Placeholder", "_Arg", "_Retval", "NoOp"}  # handled by the XLA bridge itself, no kernel
_FLOAT64 = (tf.float64, tf.complex128)
_SHAPELESS = (tf.resource, tf.variant)
_MAX_OPS_NAMED = 3


def all_ops(graph: tf.Graph) -> Iterator[tf.Operation]:
    """The graph's ops, then those of every function graph it calls (cond branches, loop bodies), once each."""
    seen: set[int] = set()
    pending = [graph]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield from current.get_operations()
        for function in getattr(current, "_functions", {}).values():
            nested = getattr(function, "graph", None)
            if nested is not None:
                pending.append(nested)


def _has_xla_kernel(op_type: str, cache: dict[str, bool]) -> bool:
    if op_type not in cache:
        registered = kernels.get_registered_kernels_for_op(op_type)
        cache[op_type] = any(k.device_type == XLA_DEVICE for k in registered.kernel)
    return cache[op_type]


def _origin(op: tf.Operation, bad) -> bool:
    """True when `op` makes a `bad` tensor from inputs that are not (where the problem starts)."""
    return op.type not in _STRUCTURAL and any(bad(t) for t in op.outputs) and not any(bad(t) for t in op.inputs)


def _is_string(t: tf.Tensor) -> bool:
    return t.dtype == tf.string


def _is_float64(t: tf.Tensor) -> bool:
    return t.dtype in _FLOAT64


def _is_dynamic(t: tf.Tensor) -> bool:
    return t.dtype not in _SHAPELESS and not t.shape.is_fully_defined()


def _ops_text(ops: list[tf.Operation], verb: str | None = None) -> str:
    """"Cast `Cast`, Const `y`", then `verb` agreeing with the number of ops."""
    named = ", ".join(f"{op.type} `{op.name}`" for op in ops[:_MAX_OPS_NAMED])
    more = len(ops) - _MAX_OPS_NAMED
    text = named + (f" and {more} more" if more > 0 else "")
    if verb is None:
        return text
    return f"{text} {verb}s" if len(ops) == 1 else f"{text} {verb}"


def _grouped(ops: list[tf.Operation]) -> dict[str | None, list[tf.Operation]]:
    groups: dict[str | None, list[tf.Operation]] = {}
    for op in ops:
        groups.setdefault(op_line(op), []).append(op)
    return groups


def graph_findings(graph: tf.Graph, mode: str) -> list[Finding]:
    """Every problem a TPU would reject in the step graph, one finding per kind and user line."""
    ops = list(all_ops(graph))
    strings = [op for op in ops if _origin(op, _is_string)]
    string_ops = {id(op) for op in ops if any(_is_string(t) for t in list(op.inputs) + list(op.outputs))}
    cache: dict[str, bool] = {}
    unsupported = [op for op in ops if op.type not in _STRUCTURAL and id(op) not in string_ops
                   and not _has_xla_kernel(op.type, cache)]
    float64 = [op for op in ops if _origin(op, _is_float64)]
    dynamic = [op for op in ops if _origin(op, _is_dynamic)]
    findings = []
    for where, group in _grouped(unsupported).items():
        types = sorted({op.type for op in group})
        findings.append(Finding(ERROR, "unsupported op", (
            f"XLA cannot compile {_ops_text(group)} (no XLA kernel for {', '.join(types)}). A TPU runs the whole "
            "step as one XLA program: compute this in input_fn or on the host instead, or with TensorFlow ops "
            "XLA supports (tf.py_function / tf.numpy_function never run on a TPU)."), (mode,), where))
    for where, group in _grouped(float64).items():
        findings.append(Finding(ERROR, "float64", (
            f"{_ops_text(group, 'make')} a float64 tensor; TPUs have no 64-bit floats. Use float32: "
            "tf.cast(x, tf.float32), dtype=tf.float32 for constants, float32 numpy arrays."), (mode,), where))
    for where, group in _grouped(strings).items():
        findings.append(Finding(ERROR, "string", (
            f"{_ops_text(group, 'make')} a string tensor; TPUs compute on numbers only. Move string work "
            "(formatting, parsing, lookups, tf.print) to input_fn or the host."), (mode,), where))
    for where, group in _grouped(dynamic).items():
        shapes = ", ".join(f"{t.shape}" for op in group[:_MAX_OPS_NAMED] for t in op.outputs if _is_dynamic(t))
        findings.append(Finding(ERROR, "dynamic shape", (
            f"{_ops_text(group, 'give')} a tensor whose shape depends on the data ({shapes}); a TPU compiles for "
            "fixed shapes. Keep shapes fixed: multiply by a 0/1 mask instead of tf.boolean_mask or gathering "
            "tf.where(cond) indices, pad to a maximum size instead of tf.unique."), (mode,), where))
    return findings
