"""Shared tf.data plumbing: turn in-memory (images, labels) into TPUEstimator-style batches.

Kept separate from the loaders so every dataset shuffles, shards and batches identically.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

# Strings equal to the estimator ModeKeys values, so either can be passed.
TRAIN = "train"
EVAL = "eval"
INFER = "infer"
MODES = (TRAIN, EVAL, INFER)

# augment(image, seed) -> image, where seed is a shape-[2] int64 tensor for stateless ops.
AugmentFn = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]


def check_mode(mode: str) -> str:
    """Return `mode` unchanged, or raise ValueError naming the accepted modes."""
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; expected one of {list(MODES)}.")
    return mode


def per_replica_batch_size(params: Mapping[str, Any]) -> int:
    """Read the per-replica batch size that the estimator puts in params."""
    batch_size = params.get("batch_size")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f'params["batch_size"] must be a positive int, got {batch_size!r}.')
    return int(batch_size)


def make_dataset(
    images: np.ndarray,
    labels: np.ndarray,
    mode: str,
    params: Mapping[str, Any],
    *,
    seed: int | None = None,
    shuffle_buffer: int | None = None,
    augment: AugmentFn | None = None,
) -> tf.data.Dataset:
    """Build the dataset for `mode`: train is sharded/shuffled/repeated, eval/infer are ordered and finite.

    Yields (uint8 images [b,H,W,C], int32 labels [b]); infer yields images only.
    """
    check_mode(mode)
    batch_size = per_replica_batch_size(params)
    images = np.asarray(images, dtype=np.uint8)
    labels = np.asarray(labels, dtype=np.int32)
    if images.ndim != 4 or labels.shape != images.shape[:1]:
        raise ValueError(f"Expected images [N,H,W,C] and labels [N], got {images.shape} and {labels.shape}.")
    if len(images) == 0:
        raise ValueError("Cannot build a dataset from zero examples.")

    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    if mode == TRAIN:
        ds = _train_stream(ds, len(images), params.get("context"), seed, shuffle_buffer, augment)
        ds = ds.batch(batch_size, drop_remainder=True)
    else:
        if mode == INFER:
            ds = ds.map(lambda image, label: image)
        ds = ds.batch(batch_size, drop_remainder=False)
        context = params.get("context")
        if context is not None and context.num_input_pipelines > 1:
            # Whole batches round-robin: each worker evaluates its share, every example once.
            ds = ds.shard(context.num_input_pipelines, context.input_pipeline_id)
    return ds.prefetch(tf.data.AUTOTUNE)


def _train_stream(
    ds: tf.data.Dataset,
    num_examples: int,
    context: tf.distribute.InputContext | None,
    seed: int | None,
    shuffle_buffer: int | None,
    augment: AugmentFn | None,
) -> tf.data.Dataset:
    """Shard (one slice per input pipeline), shuffle, repeat forever, then augment per example."""
    pipeline_id = 0
    if context is not None and context.num_input_pipelines > 1:
        if num_examples < context.num_input_pipelines:
            raise ValueError(
                f"{num_examples} examples cannot be sharded over {context.num_input_pipelines} input pipelines."
            )
        pipeline_id = context.input_pipeline_id
        ds = ds.shard(context.num_input_pipelines, pipeline_id)
    ds = ds.shuffle(shuffle_buffer or num_examples, seed=seed, reshuffle_each_iteration=True).repeat()
    if augment is not None:
        # Stateless ops fed by a seeded stream keep augmentation reproducible when `seed` is set.
        op_seeds = tf.data.Dataset.random(seed=None if seed is None else seed + pipeline_id).batch(2)
        ds = tf.data.Dataset.zip((ds, op_seeds)).map(
            lambda example, op_seed: (augment(example[0], op_seed), example[1]),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
    return ds
