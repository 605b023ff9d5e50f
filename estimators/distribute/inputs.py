"""Calling input_fn as TPUEstimator's input deployment says, and shaping what it returns into per-replica batches.

Train input must have a static batch dimension on paths compiled for TPUs. Eval and predict
input may end in a partial batch: every element gets a `mask` of real rows, the stream goes on
with all-padding batches so every replica can step until all are done, and on static-shape paths
the partial batch is padded to full size (eval splits it into one-real-row batches so each model_fn
call's mean loss is one example's, and evaluation off the TPU weights elements by their share of an input_fn
batch, 2.15's mean of batch losses).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.compat.input_fn_call import call_input_fn
from estimators.compat.tpu_context import TPUContext
from estimators.distribute.input_pipeline import InputPipelineConfig
from estimators.mode_keys import ModeKeys


def per_replica_batch_size(global_batch: int, num_replicas: int, what: str) -> int:
    """The per-replica batch; ValueError naming both numbers when they do not divide."""
    if not isinstance(global_batch, int) or global_batch < 1:
        raise ValueError(f"{what} must be a positive integer, got {global_batch!r}.")
    if global_batch % num_replicas:
        raise ValueError(
            f"{what}={global_batch} does not divide by the {num_replicas} replicas in sync; "
            f"use a multiple of {num_replicas} (e.g. {max(1, global_batch // num_replicas) * num_replicas})."
        )
    return global_batch // num_replicas


def split_element(element: Any, mode: str | None = None) -> tuple[Any, Any]:
    """(features, labels) from a dataset element, by tf.estimator's rule for every mode.

    A tuple or list must be (features, labels); anything else is features alone (labels None).
    """
    del mode  # the rule is the same in every mode (predict then drops labels off a TPU: tf2/steps.py)
    if isinstance(element, (tuple, list)):
        if len(element) != 2:
            raise ValueError(
                f"input_fn's dataset yields a {type(element).__name__} of {len(element)} items; tf.estimator "
                "takes a tuple as (features, labels). Yield (features, labels), or features alone (a tensor "
                "or a dict)."
            )
        return element[0], element[1]
    return element, None


def _batch_dims(element_spec: Any) -> list:
    return [spec.shape[0] if spec.shape.rank else None for spec in tf.nest.flatten(element_spec)]


def check_static_batch(element_spec: Any, batch_size: int) -> None:
    """ValueError unless every tensor's first dimension is statically `batch_size`."""
    dims = _batch_dims(element_spec)
    if any(d is None for d in dims):
        raise ValueError(
            "input_fn's dataset has an unknown batch dimension (element_spec "
            f"{element_spec}); TPU programs need static shapes. Batch with "
            "`dataset.batch(params['batch_size'], drop_remainder=True)`."
        )
    if any(d != batch_size for d in dims):
        raise ValueError(
            f"input_fn's batches have first dimensions {dims}, but params['batch_size'] is "
            f"{batch_size}; batch with `dataset.batch(params['batch_size'])`."
        )


def check_static_shapes(element_spec: Any) -> None:
    """ValueError unless every tensor's shape is fully static (PER_HOST_V2 / PER_SHARD_V1 batches, any layout).

    2.15 split only PER_HOST_V1 host batches along their first axis; per-replica batches went to the
    cores as input_fn made them (the HWCN layout of the tensorflow/tpu ResNet input, say), so their
    first dimension need not be the batch.
    """
    unknown = [spec.shape for spec in tf.nest.flatten(element_spec) if not spec.shape.is_fully_defined()]
    if unknown:
        raise ValueError(
            f"input_fn's dataset has shapes not fully known ({unknown}); TPU programs need static shapes. "
            "Batch with `dataset.batch(params['batch_size'], drop_remainder=True)` and set any unknown dimension "
            "(`tensor.set_shape`)."
        )


def _rows(element: Any) -> tf.Tensor:
    return tf.shape(tf.nest.flatten(element)[0], out_type=tf.int64)[0]


def _pad_rows(tensor: tf.Tensor, size: int) -> tf.Tensor:
    missing = size - tf.shape(tensor)[0]
    paddings = [[0, missing]] + [[0, 0]] * (tensor.shape.rank - 1)
    padded = tf.pad(tensor, paddings)
    return tf.ensure_shape(padded, [size] + tensor.shape.as_list()[1:])


def _repeat_rows(tensor: tf.Tensor, size: int) -> tf.Tensor:
    return tf.repeat(tf.expand_dims(tensor, 0), size, axis=0)


def _empty_like(spec: tf.TensorSpec, rows: int) -> tf.Tensor:
    shape = [rows] + [d if d is not None else 0 for d in spec.shape.as_list()[1:]]
    return tf.zeros(shape, spec.dtype)


def _whole_batches_stream(dataset: tf.data.Dataset, batch_size: int) -> tf.data.Dataset:
    """masked_stream for static batches in any layout: every element is a whole batch of `batch_size` rows.

    Fully static shapes make every element the same shape, so none is partial; its rows cannot be
    found (the batch need not be the first axis), so none is padded or split. Then all-padding
    batches of the same shapes, without end.
    """
    check_static_shapes(dataset.element_spec)
    stream = dataset.map(lambda *element: (element[0] if len(element) == 1 else element,
                                           tf.ones([batch_size], tf.bool)))
    padding = tf.nest.map_structure(lambda s: tf.zeros(s.shape, s.dtype), stream.element_spec[0])
    return stream.concatenate(tf.data.Dataset.from_tensors((padding, tf.zeros([batch_size], tf.bool))).repeat())


def _with_share(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """(batch, 1.0) for each batch: a whole input_fn batch's share of itself."""
    return dataset.map(lambda *element: (element[0] if len(element) == 1 else element, 1.0))


def masked_stream(dataset: tf.data.Dataset, batch_size: int, static: bool, split_partial: bool,
                  any_layout: bool = False, shares: bool = False) -> tf.data.Dataset:
    """Adds a per-row `mask`, then all-padding batches without end.

    static: pad partial batches to `batch_size` rows (padding rows are masked out).
    split_partial: instead, turn a partial batch into one batch per real row, that row repeated,
    so a model_fn's mean loss over the batch is that example's loss (exact evaluation).
    any_layout: per-replica batches as input_fn made them (PER_HOST_V2): batches with a known first
    dimension other than `batch_size` are taken as whole batches in another layout (HWCN, say).
    shares: the dataset yields (batch, share) (split_host_batches's pieces) and each element ends with
    its share: of a split partial batch, one row's part of it (the weights of 2.15's per-batch mean loss).
    """
    def unpacked(args: tuple) -> tuple[Any, Any]:
        """(batch, its share) of one dataset element; a stream without shares counts each batch whole."""
        return (args[0], args[1]) if shares else (args[0] if len(args) == 1 else args, 1.0)

    def packed(element: Any, mask: tf.Tensor, share: Any) -> tuple:
        return (element, mask, share) if shares else (element, mask)

    dims = _batch_dims(dataset.element_spec[0] if shares else dataset.element_spec)
    if any_layout and static and any(d is not None and d != batch_size for d in dims):
        stream = _whole_batches_stream(dataset.map(lambda element, share: element) if shares else dataset, batch_size)
        return stream.map(lambda element, mask: (element, mask, tf.cast(tf.reduce_any(mask), tf.float32)))\
            if shares else stream
    if static and any(d is not None and d > batch_size for d in dims):
        raise ValueError(f"input_fn's batches have {dims} rows, more than params['batch_size']={batch_size}.")

    def add_mask(*args):
        element, share = unpacked(args)
        rows = _rows(element)
        if not static:
            return packed(element, tf.ones([rows], tf.bool), share)
        padded = tf.nest.map_structure(lambda t: _pad_rows(t, batch_size), element)
        return packed(padded, tf.range(batch_size, dtype=tf.int64) < rows, share)

    def one_row_batches(*args):
        element, share = unpacked(args)
        rows = _rows(element)
        full = tf.data.Dataset.from_tensors(args if shares else element).map(add_mask)
        row_share = share / tf.cast(rows, tf.float32)
        singles = tf.data.Dataset.from_tensor_slices(element).map(
            lambda *row: packed(
                tf.nest.map_structure(lambda t: _repeat_rows(t, batch_size), row[0] if len(row) == 1 else row),
                tf.range(batch_size) < 1,
                row_share,
            )
        )
        is_full = tf.cast(rows == batch_size, tf.int64)
        return full.take(is_full).concatenate(singles.take((1 - is_full) * rows))

    stream = dataset.flat_map(one_row_batches) if static and split_partial else dataset.map(add_mask)
    # After the data: all-padding batches forever, so every replica on every worker can take a
    # step until all have run out (the loop stops at the first step without a real row).
    padding_rows = batch_size if static else 0
    padding = tf.nest.map_structure(lambda s: _empty_like(s, padding_rows), stream.element_spec[0])
    return stream.concatenate(
        tf.data.Dataset.from_tensors(packed(padding, tf.zeros([padding_rows], tf.bool), 0.0)).repeat())


def whole_steps(dataset: tf.data.Dataset, replicas: int) -> tf.data.Dataset:
    """A finite train stream cut to whole steps of the pipeline's `replicas` (consecutive batches form a step).

    As on TPUEstimator's infeed, a step that not every replica has a batch for is not run: left in,
    tf.distribute would hand the idle replicas empty batches (a NaN loss, NaN BatchNorm statistics)
    and give model_fn an unknown batch size inside compiled loops.
    """
    if replicas <= 1 or dataset.cardinality() == tf.data.INFINITE_CARDINALITY:
        return dataset
    return dataset.batch(replicas, drop_remainder=True).unbatch()


def split_host_batches(dataset: tf.data.Dataset, per_replica: int, replicas: int,
                       shares: bool = False) -> tf.data.Dataset:
    """Each host batch as `replicas` consecutive per-replica batches: rows [k*b, (k+1)*b) go to the host's k-th replica.

    This is PER_HOST_V1's split (2.15 cut the host batch along its first axis, one slice per core
    in order). A full batch of static size is reshaped (static shapes stay static); any other batch
    is sliced, its last slice partial (eval and predict pad it afterwards).
    shares: each piece comes as (piece, its rows / the host batch's rows), masked_stream's `shares`.
    """
    if replicas == 1:
        return _with_share(dataset) if shares else dataset
    host_batch = per_replica * replicas
    dims = _batch_dims(dataset.element_spec)
    if any(d is not None and d > host_batch for d in dims):
        raise ValueError(f"input_fn's batches have {dims} rows, more than params['batch_size']={host_batch}.")

    def reshaped(element):
        sliced = tf.data.Dataset.from_tensor_slices(tf.nest.map_structure(
            lambda t: tf.reshape(t, tf.concat([[replicas, per_replica], tf.shape(t)[1:]], 0)), element))
        return sliced.map(lambda *piece: (piece[0] if len(piece) == 1 else piece, 1.0 / replicas)) if shares \
            else sliced

    def sliced(element):
        rows = _rows(element)
        count = (rows + per_replica - 1) // per_replica

        def piece(i):
            start = i * per_replica
            end = tf.minimum(start + per_replica, rows)
            part = tf.nest.map_structure(lambda t: t[start:end], element)
            return (part, tf.cast(end - start, tf.float32) / tf.cast(rows, tf.float32)) if shares else part

        return tf.data.Dataset.range(count).map(piece)

    pieces = reshaped if all(d == host_batch for d in dims) else sliced
    return dataset.flat_map(lambda *element: pieces(element[0] if len(element) == 1 else element))


def take_in_turn(datasets: list[tf.data.Dataset]) -> tf.data.Dataset:
    """One element of each dataset in turn (PER_SHARD_V1: input_fn call k feeds the host's k-th replica)."""
    if len(datasets) == 1:
        return datasets[0]
    order = tf.data.Dataset.range(len(datasets)).repeat()
    return tf.data.Dataset.choose_from_datasets(datasets, order, stop_on_empty_dataset=True)


@dataclasses.dataclass(frozen=True)
class InputDeployment:
    """How TPUEstimator calls input_fn for one mode (2.15's TPUConfig.per_host_input_for_training).

    `kind` is an InputPipelineConfig value: PER_HOST_V1 (input_fn per host, host batch split into
    contiguous per-replica slices), PER_HOST_V2 (per host, per-replica batches taken in turn),
    PER_SHARD_V1 (per replica, training only) or SLICED (eval/predict from one host, as PER_HOST_V1).
    """

    kind: int
    running_on_cpu: bool

    @classmethod
    def for_mode(cls, tpu_config: Any, mode: str, running_on_cpu: bool) -> InputDeployment:
        kind = tpu_config.per_host_input_for_training
        if mode != ModeKeys.TRAIN:
            if tpu_config.eval_training_input_configuration == InputPipelineConfig.SLICED:
                if running_on_cpu:
                    raise ValueError(
                        "TPUConfig(eval_training_input_configuration=SLICED) works only on a TPU (use_tpu=True "
                        "with eval_on_tpu=True for evaluation), as in TPUEstimator 2.15; use PER_HOST_V1 here."
                    )
                kind = InputPipelineConfig.SLICED
            elif kind == InputPipelineConfig.PER_SHARD_V1:
                kind = InputPipelineConfig.PER_HOST_V1  # 2.15: per-core input only for training
        return cls(kind, running_on_cpu)

    def context(self, input_context: tf.distribute.InputContext, invocation: int | None = None) -> TPUContext:
        """params['context'] for one input_fn call on the host `input_context` describes."""
        replicas, hosts = input_context.num_replicas_in_sync, input_context.num_input_pipelines
        host = input_context.input_pipeline_id
        if self.kind == InputPipelineConfig.PER_SHARD_V1:
            per_host = replicas // hosts
            return TPUContext(num_replicas=replicas, num_hosts=hosts, running_on_cpu=self.running_on_cpu,
                              from_input_fn=True, current_host=host, invocation_index=host * per_host + invocation,
                              num_invocations=replicas, replicas_per_invocation=1)
        return TPUContext(num_replicas=replicas, num_hosts=hosts, running_on_cpu=self.running_on_cpu,
                          from_input_fn=True, current_host=host, invocation_index=host)


def make_dataset_fn(input_fn: Callable, params: dict, config: Any, global_batch: int, mode: str, static: bool,
                    deployment: InputDeployment) -> Callable:
    """The function handed to distribute_datasets_from_function for one mode (TPUEstimator's input_fn contract).

    input_fn gets params['batch_size'] (the host batch with PER_HOST_V1/SLICED, the per-replica
    batch otherwise, as in 2.15) and params['context'] (a TPUContext, also the InputContext), and
    `input_context` / `mode` / `config` by name. Whatever the deployment, each replica receives
    per-replica batches in the order 2.15 fed its cores.
    """

    def call(context: TPUContext, batch_size: int) -> tf.data.Dataset:
        dataset = call_input_fn(input_fn, mode=mode, params=dict(params, batch_size=batch_size, context=context),
                                config=config, input_context=context, require_params=True)
        if mode == ModeKeys.TRAIN:
            split_element(dataset.element_spec)
            if static and deployment.kind in (InputPipelineConfig.PER_HOST_V2, InputPipelineConfig.PER_SHARD_V1):
                check_static_shapes(dataset.element_spec)
            elif static:
                check_static_batch(dataset.element_spec, batch_size)
        return dataset

    # Evaluation off the TPU reports 2.15's CPU loss, the mean of model_fn's losses over input_fn's batches:
    # each element carries its share of its input_fn batch (a TPU's stays the exact mean over real rows).
    batch_mean = mode == ModeKeys.EVAL and deployment.running_on_cpu

    def dataset_fn(input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        replicas, hosts = input_context.num_replicas_in_sync, input_context.num_input_pipelines
        per_replica = per_replica_batch_size(global_batch, replicas, f"the global {mode} batch size")
        per_host = replicas // hosts
        if deployment.kind == InputPipelineConfig.PER_SHARD_V1:
            dataset = take_in_turn([call(deployment.context(input_context, k), per_replica) for k in range(per_host)])
        elif deployment.kind == InputPipelineConfig.PER_HOST_V2:
            dataset = call(deployment.context(input_context), per_replica)
            dataset = _with_share(dataset) if batch_mean else dataset
        else:
            if deployment.kind == InputPipelineConfig.SLICED and hosts > 1:
                raise ValueError(
                    f"TPUConfig(eval_training_input_configuration=SLICED) reads {mode} input on host 0 only and "
                    f"sends it to all {hosts} hosts, which tf.distribute cannot do; use PER_HOST_V1."
                )
            dataset = split_host_batches(call(deployment.context(input_context), per_replica * per_host),
                                         per_replica, per_host, shares=batch_mean)
        if mode == ModeKeys.TRAIN:
            return whole_steps(dataset, per_host)
        return masked_stream(dataset, per_replica, static, split_partial=mode == ModeKeys.EVAL,
                             any_layout=deployment.kind == InputPipelineConfig.PER_HOST_V2, shares=batch_mean)

    return dataset_fn
