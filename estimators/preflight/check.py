"""preflight(estimator, input_fns): would a TPU take this model? Compiles each step as one TPU core runs it.

For each mode with an input_fn: the global batch is split over the cores (TPUConfig.num_shards,
default 8), input_fn is called for one input pipeline feeding them all, its element is checked
(static shapes, numbers only), and the engine's step for one core is traced and compiled with
XLA on the CPU. The verdict is a PreflightReport: errors for what a TPU would reject, warnings
for what it would run slowly. Nothing is trained, no checkpoint is needed, model_dir is left
alone, and the random state is as it was (a seeded run after preflight starts as without it).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from estimators import precision
from estimators.compat import guards  # noqa: F401 - registers the engine's guards before any call
from estimators.compat.scoped_patches import engine_call
from estimators.mode_keys import ModeKeys
from estimators.preflight import inputs
from estimators.preflight.compile import CoreSteps
from estimators.preflight.graph_checks import graph_findings
from estimators.preflight.report import ERROR, Finding, PreflightReport, StepSummary
from estimators.tf2.collection import safe_point

DEFAULT_CORES = 8  # a TPU v2-8 / v3-8 / v4-8 host: the replica layout TPUEstimator compiled for
_MODE_ALIASES = {"train": ModeKeys.TRAIN, "eval": ModeKeys.EVAL, "evaluate": ModeKeys.EVAL,
                 "infer": ModeKeys.PREDICT, "predict": ModeKeys.PREDICT}


def preflight(estimator: Any, input_fns: Callable | Mapping[str, Callable],
              num_cores: int | None = None) -> PreflightReport:
    """Checks what a TPU would reject in `estimator`'s train, evaluate and predict steps.

    input_fns: {mode: input_fn} (ModeKeys or "train"/"eval"/"predict"), or one input_fn for every
    mode the estimator has a batch size for. num_cores: TPU cores (default TPUConfig.num_shards, else 8).
    """
    from estimators.tpu.estimator import TPUEstimator

    if not isinstance(estimator, TPUEstimator):
        raise ValueError(
            f"preflight checks TPUEstimator programs; got a {type(estimator).__name__}. Only TPUEstimator runs on "
            "a TPU (it splits the batch per core and compiles static shapes): wrap the same model_fn in "
            "TPUEstimator(model_fn, train_batch_size=..., ...)."
        )
    cores = num_cores if num_cores is not None else (estimator.config.tpu_config.num_shards or DEFAULT_CORES)
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
        raise ValueError(f"num_cores must be a positive integer, got {cores!r}.")
    by_mode = _input_fns_by_mode(estimator, input_fns)
    report = PreflightReport(cores, precision.resolve(estimator.config, estimator.params))
    with safe_point(collect_first=True), engine_call(), _random_state_kept():
        deployment = estimator._deployment  # noqa: SLF001
        steps = CoreSteps(estimator._context.model_fn, estimator.params, estimator.config, cores,  # noqa: SLF001
                          lambda params, batch: dict(deployment.params_for_model_fn(params, batch), use_tpu=True))
        for mode, input_fn in by_mode.items():
            _check_mode(report, estimator, steps, mode, input_fn, cores)
    return report


def _input_fns_by_mode(estimator: Any, input_fns: Callable | Mapping[str, Callable]) -> dict[str, Callable]:
    if callable(input_fns):
        sizes = estimator._batch_sizes  # noqa: SLF001
        return {mode: input_fns for mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT) if sizes[mode]}
    if not isinstance(input_fns, Mapping) or not input_fns:
        raise ValueError("input_fns must be an input_fn or a dict {mode: input_fn} (modes train, eval, predict).")
    by_mode = {}
    for key, input_fn in input_fns.items():
        if key not in _MODE_ALIASES:
            raise ValueError(f"input_fns has an unknown mode {key!r}; use train, eval or predict (or ModeKeys).")
        if not callable(input_fn):
            raise ValueError(f"input_fns[{key!r}] must be an input_fn, got {type(input_fn).__name__}.")
        by_mode[_MODE_ALIASES[key]] = input_fn
    order = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
    return {mode: by_mode[mode] for mode in order if mode in by_mode}


def _check_mode(report: PreflightReport, estimator: Any, steps: CoreSteps, mode: str, input_fn: Callable,
                cores: int) -> None:
    arg = inputs.BATCH_ARGS[mode]
    global_batch = estimator._batch_sizes[mode]  # noqa: SLF001
    if mode == ModeKeys.EVAL and not estimator._eval_on_tpu:  # noqa: SLF001
        report.steps.append(StepSummary(mode, "-", "skipped: eval_on_tpu=False evaluates on the CPU"))
        return
    if global_batch is None:
        report.add(Finding(ERROR, "batch", f"TPUEstimator needs {arg} for this step; pass it to TPUEstimator().",
                           (mode,)))
        report.steps.append(StepSummary(mode, f"no {arg}", "not checked"))
        return
    for finding in inputs.batch_findings(mode, global_batch, cores):
        report.add(finding)
    if global_batch % cores:
        report.steps.append(StepSummary(mode, f"{arg}={global_batch} / {cores} cores", "not checked"))
        return
    per_core = global_batch // cores
    batch = f"{per_core} examples per core ({arg}={global_batch} / {cores} cores)"

    def done(status: str) -> None:
        report.steps.append(StepSummary(mode, batch, status))

    try:
        dataset = inputs.core_dataset(input_fn, estimator._deployment.input_params(), estimator.config, per_core, mode,  # noqa: SLF001
                                      cores)
        element_spec = inputs.input_element_spec(dataset, mode)
        found = inputs.spec_findings(element_spec, mode, per_core)
        element = inputs.zeros_like_spec(dataset.element_spec, per_core)
    except (ValueError, TypeError) as err:
        report.add(Finding(ERROR, "input", f"input_fn: {err}", (mode,)))
        return done("not compiled (input_fn)")
    traced = steps.trace(mode, per_core, element)
    if isinstance(traced, Finding):
        for finding in found + [traced]:
            report.add(finding)
        return done("not compiled (model_fn failed)")
    concrete, step = traced
    found += graph_findings(concrete.graph, mode)
    compiled, compile_errors = steps.compile(mode, step, element, found)
    for finding in found + compile_errors:
        report.add(finding)
    if not compiled:
        return done("does not compile")
    errors = any(f.severity == ERROR for f in found)
    done("compiles on the CPU, but a TPU would reject it (below)" if errors else "compiles")


@contextlib.contextmanager
def _random_state_kept() -> Iterator[None]:
    """Python's, numpy's and TensorFlow's eager random state as before the block.

    Building model_fn's layers draws seeds (Keras initializers and dropout take Python random
    seeds, TF's eager ops op-level seeds): a seeded run after preflight must start as without it.
    """
    python_state, numpy_state = random.getstate(), np.random.get_state()
    from tensorflow.python.eager import context

    ctx = context.context()
    rng = getattr(ctx, "_rng", None)
    tf_state = rng.getstate() if rng is not None else None
    try:
        yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        if tf_state is not None and getattr(ctx, "_rng", None) is rng:
            rng.setstate(tf_state)
