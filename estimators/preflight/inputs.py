"""A TPU core's input: input_fn called as for N cores, its element checked for what a TPU's infeed rejects.

TPUEstimator calls input_fn with the per-core batch; a TPU compiles the step for the exact
shapes it is fed, so train batches need a static first dimension (`drop_remainder=True`), and
every other dimension must be fixed in any mode (eval and predict batches are padded by the
engine). A TPU's infeed carries numbers only: no strings, and no float64.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from estimators.distribute.inputs import InputDeployment, make_dataset_fn, split_element
from estimators.mode_keys import ModeKeys
from estimators.preflight.report import ERROR, WARNING, Finding

MXU_BATCH = 128  # examples per core that fill a TPU core's 128x128 matrix unit
TILE = 8  # XLA on a TPU pads the batch dimension of each core's arrays to a multiple of 8

BATCH_ARGS = {ModeKeys.TRAIN: "train_batch_size", ModeKeys.EVAL: "eval_batch_size",
              ModeKeys.PREDICT: "predict_batch_size"}


def batch_findings(mode: str, global_batch: int, num_cores: int) -> list[Finding]:
    """A global batch that does not split over the cores (error), or a per-core batch a TPU pads (warning)."""
    arg = BATCH_ARGS[mode]
    if global_batch % num_cores:
        lower = max(num_cores, global_batch // num_cores * num_cores)
        return [Finding(ERROR, "batch", (
            f"{arg}={global_batch} does not divide by the {num_cores} TPU cores; use a multiple of "
            f"{num_cores}: {lower} ({lower // num_cores} per core), or {MXU_BATCH * num_cores} "
            f"({MXU_BATCH} per core, which fills each core's matrix unit)."), (mode,))]
    per_core = global_batch // num_cores
    if per_core % TILE:
        padded = -(-per_core // TILE) * TILE
        return [Finding(WARNING, "batch", (
            f"{per_core} examples per core ({arg}={global_batch} / {num_cores} cores) is not a multiple of {TILE}: "
            f"XLA pads each core's batch to {padded}, so {padded - per_core} of every {padded} rows are wasted work. "
            f"{MXU_BATCH} per core ({arg}={MXU_BATCH * num_cores}) fills each core's 128-wide matrix unit."), (mode,))]
    return []


def core_dataset(input_fn: Callable, params: dict, config: Any, per_core: int, mode: str,
                 num_cores: int) -> tf.data.Dataset:
    """input_fn's dataset for one input pipeline feeding `num_cores` cores, as the engine builds it on a TPU.

    input_fn is called as the estimator's TPUConfig deploys it (PER_HOST_V1 by default: once with
    the host batch, split into per-core batches); each element is one core's batch. Train input is
    taken as input_fn made it (its static shape is checked here, not refused); eval and predict
    input get the engine's mask and padding to whole per-core batches.
    """
    context = tf.distribute.InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=num_cores)
    static = mode != ModeKeys.TRAIN
    deployment = InputDeployment.for_mode(config.tpu_config, mode, running_on_cpu=False)
    return make_dataset_fn(input_fn, params, config, per_core * num_cores, mode, static=static,
                           deployment=deployment)(context)


def input_element_spec(dataset: tf.data.Dataset, mode: str) -> Any:
    """input_fn's own element structure (eval/predict elements carry the engine's mask beside it)."""
    return dataset.element_spec if mode == ModeKeys.TRAIN else dataset.element_spec[0]


def named_specs(element_spec: Any) -> Iterator[tuple[str, tf.TensorSpec]]:
    """("features['image']", spec), ("labels", spec), ... for every tensor of an element."""
    features, labels = split_element(element_spec)
    yield from _named("features", features)
    if labels is not None:
        yield from _named("labels", labels)


def _named(prefix: str, structure: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(structure, dict):
        for key, value in structure.items():
            yield from _named(f"{prefix}[{key!r}]", value)
    elif isinstance(structure, (tuple, list)):
        for index, value in enumerate(structure):
            yield from _named(f"{prefix}[{index}]", value)
    else:
        yield prefix, structure


def spec_findings(element_spec: Any, mode: str, per_core: int) -> list[Finding]:
    """Dynamic dimensions, wrong batch sizes, strings and float64 in one core's input."""
    findings, unknown_batch = [], []
    for name, spec in named_specs(element_spec):
        if not isinstance(spec, tf.TensorSpec):
            findings.append(Finding(ERROR, "input", (
                f"{name} is a {type(spec).__name__}; a TPU takes dense tensors only: densify it in input_fn "
                "(e.g. tf.sparse.to_dense, or a ragged tensor's .to_tensor(shape=...))."), (mode,)))
            continue
        if mode == ModeKeys.TRAIN and spec.shape.rank and spec.shape[0] is None:
            unknown_batch.append(f"{name} {_shape(spec.shape)}")
        findings += _shape_findings(name, spec, mode, per_core)
        if spec.dtype == tf.string:
            findings.append(Finding(ERROR, "string", (
                f"{name} is a string tensor; a TPU's input carries numbers only: turn it into numbers in "
                "input_fn (decode, parse or look it up there), or leave it out of the features."), (mode,)))
        elif spec.dtype in (tf.float64, tf.complex128):
            findings.append(Finding(ERROR, "float64", (
                f"{name} is {spec.dtype.name}; TPUs have no 64-bit floats: cast it in input_fn "
                "(`dataset.map(lambda x, y: (tf.cast(x, tf.float32), y))`, or build the arrays as float32)."),
                (mode,)))
    if unknown_batch:
        findings.insert(0, Finding(ERROR, "dynamic shape", (
            f"the batch dimension of {', '.join(unknown_batch)} is unknown: the last batch may be smaller, and a TPU "
            "compiles for fixed shapes. Batch with `dataset.batch(params['batch_size'], drop_remainder=True)`."),
            (mode,)))
    return findings


def _shape_findings(name: str, spec: tf.TensorSpec, mode: str, per_core: int) -> list[Finding]:
    """A tensor's unknown rank or non-batch dimensions, and (train) a batch other than the per-core batch."""
    shape = spec.shape
    if shape.rank is None:
        return [Finding(ERROR, "dynamic shape", (
            f"{name} has an unknown rank; a TPU compiles for fixed shapes: give it one "
            "(tf.ensure_shape in input_fn, or set_shape)."), (mode,))]
    if shape.rank == 0:
        return [Finding(ERROR, "input", (
            f"{name} is a scalar per element; every input tensor needs a batch dimension: batch it with "
            "`dataset.batch(params['batch_size'], drop_remainder=True)`."), (mode,))]
    findings = []
    if mode == ModeKeys.TRAIN and shape[0] is not None and shape[0] != per_core:
        findings.append(Finding(ERROR, "input", (
            f"{name} comes in batches of {shape[0]}, but each core's batch is params['batch_size']={per_core}: "
            "batch with `dataset.batch(params['batch_size'], drop_remainder=True)`."), (mode,)))
    unknown = [i for i, d in enumerate(shape) if d is None and i > 0]
    if unknown:
        dims = ", ".join(str(i) for i in unknown)
        findings.append(Finding(ERROR, "dynamic shape", (
            f"{name} has shape {_shape(shape)}: dimension {dims} is not fixed, and a TPU compiles for fixed "
            "shapes. Pad or cut it to a fixed size in input_fn (`dataset.padded_batch(params['batch_size'], "
            "padded_shapes=..., drop_remainder=True)`, or tf.ensure_shape)."), (mode,)))
    return findings


def _shape(shape: tf.TensorShape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def zeros_like_spec(element_spec: Any, per_core: int) -> Any:
    """An element of zeros (empty strings) in `element_spec`'s structure, unknown dimensions filled in.

    An unknown batch dimension becomes the per-core batch, any other unknown dimension 1: the
    step is still compiled (and checked for its other problems) after a dynamic input is reported.
    """

    def zeros(spec: Any) -> Any:
        if not isinstance(spec, tf.TensorSpec):
            raise TypeError(f"cannot feed a {type(spec).__name__}")
        dims = spec.shape.as_list() if spec.shape.rank is not None else [per_core]
        dims = [(per_core if i == 0 else 1) if d is None else d for i, d in enumerate(dims)]
        if spec.dtype == tf.string:
            return tf.fill(dims, "")
        return tf.zeros(dims, spec.dtype)

    return tf.nest.map_structure(zeros, element_spec)
