"""One TPU core's step built by the engine and compiled with XLA on one CPU device.

The step is the engine's own (ModelFnSteps, as the training and inference loops run it), told
there are N replicas (so model_fn gets the per-core params and the cross-shard checks apply),
wrapped in tf.function(jit_compile=True) and lowered to HLO on /cpu:0. Only one replica's step
is compiled: XLA cannot place MirroredStrategy's per-replica compiled steps on their own
logical CPUs (see tf2/state.py), and every TPU core runs that same program anyway.
Variables live in a throwaway variable store: nothing is read from or written to model_dir.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.mode_keys import ModeKeys
from estimators.preflight.report import ERROR, Finding
from estimators.preflight.source import exception_line
from estimators.tf2.state import Runtime
from estimators.tf2.steps import ModelFnSteps

_DEVICE = "/cpu:0"
_BUILDERS = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate", ModeKeys.PREDICT: "predict"}
_UNSUPPORTED = re.compile(
    r"(\w+) \(No registered '\w+' OpKernel for \w+ devices compatible with node \{\{node ([^}]+)\}\}")
_CONSTANT = re.compile(r"Input (\d+) to node `([^`]+)` with op (\w+) must be a compile-time constant")


class CoreSteps:
    """The engine's per-replica steps for `num_cores` replicas, on a private store and global step."""

    def __init__(self, model_fn: Callable, params: dict, config: Any, num_cores: int,
                 params_for_model_fn: Callable[[dict, int | None], dict]):
        self._strategy = tf.distribute.get_strategy()
        with tf.device(_DEVICE):
            self._runtime = Runtime(self._strategy, model_fn, params, config,
                                    static_shapes=True, params_for_model_fn=params_for_model_fn)
        self._steps = ModelFnSteps(model_fn, params, config, num_cores, static_shapes=True,
                                   global_step=self._runtime.global_step,
                                   store=self._runtime.store, jit_compile=True,
                                   params_for_model_fn=params_for_model_fn)

    def trace(self, mode: str, per_core: int, element: Any) -> tuple[Any, Callable] | Finding:
        """(concrete step, compiled step function) for `mode`, or a Finding when model_fn fails to build it."""
        step, _ = getattr(self._steps, _BUILDERS[mode])(per_core)
        try:
            with tf.device(_DEVICE), self._strategy.scope(), self._runtime.step_scope(mode):
                return step.get_concrete_function(element), step
        except Exception as err:  # noqa: BLE001 - whatever model_fn raises is reported, not raised
            return Finding(ERROR, "model_fn", f"model_fn failed while building the step: {_first_line(err)}",
                           (mode,), exception_line(err))

    def compile(self, mode: str, step: Callable, element: Any, known: list[Finding]) -> tuple[bool, list[Finding]]:
        """XLA's verdict on the step: (compiled, its errors in plain words).

        Errors already explained by `known` findings (unsupported ops, dynamic shapes found in
        the graph) are not repeated.
        """
        try:
            with tf.device(_DEVICE), self._strategy.scope(), self._runtime.step_scope(mode):
                step.experimental_get_compiler_ir(element)(stage="hlo")
        except Exception as err:  # noqa: BLE001 - XLA's error is translated, not raised
            return False, _translated(str(err), mode, known)
        return True, []


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


def _translated(message: str, mode: str, known: list[Finding]) -> list[Finding]:
    kinds = {f.kind for f in known}
    unsupported = _UNSUPPORTED.findall(message)
    if unsupported:
        if "unsupported op" in kinds or "string" in kinds:
            return []
        ops = ", ".join(f"{op_type} `{node}`" for op_type, node in unsupported)
        return [Finding(ERROR, "unsupported op", f"XLA cannot compile {ops}: compute it in input_fn or on the host.",
                        (mode,))]
    constant = _CONSTANT.search(message)
    if constant:
        if "dynamic shape" in kinds:
            return []
        index, node, op_type = constant.groups()
        return [Finding(ERROR, "dynamic shape", (
            f"input {index} of {op_type} `{node}` depends on the data, but XLA needs it fixed when it compiles "
            "(a shape, size or axis): compute it from static shapes (x.shape) or constants."), (mode,))]
    text = message.replace("Failed getting HLO text:", "").strip().strip("'").splitlines()
    return [Finding(ERROR, "compile", f"XLA could not compile the step: {text[0] if text else message}", (mode,))]
