"""DatasetSource: what a dataset is (shape, classes) plus how to load it and wrap it as an input_fn."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from input_fns import pipeline

# loader(split, data_dir, **load_options) -> (uint8 images [N,H,W,C], int32 labels [N])
Loader = Callable[..., tuple[np.ndarray, np.ndarray]]
InputFn = Callable[[Mapping[str, Any]], tf.data.Dataset]

SPLITS = ("train", "test")
# Options consumed by the tf.data pipeline; anything else is forwarded to the loader.
_PIPELINE_OPTIONS = ("seed", "shuffle_buffer", "augment", "split")


@dataclasses.dataclass(frozen=True)
class DatasetSource:
    """One registered dataset: metadata plus a numpy loader and optional train-time augmentation."""

    name: str
    image_shape: tuple[int, int, int]
    num_classes: int
    class_names: tuple[str, ...]
    loader: Loader = dataclasses.field(repr=False)
    augment: pipeline.AugmentFn | None = dataclasses.field(default=None, repr=False)
    # locate(split, data_dir) -> the files loader reads; None for generated data.
    locate: Callable[[str, str | None], tuple[str, ...]] | None = dataclasses.field(default=None, repr=False)

    def load(self, split: str, data_dir: str | None = None, **load_options: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return (images uint8 [N,H,W,C], labels int32 [N]) for split "train" or "test"."""
        if split not in SPLITS:
            raise ValueError(f"Unknown split {split!r}; expected one of {list(SPLITS)}.")
        images, labels = self.loader(split, data_dir, **load_options)
        return np.asarray(images, dtype=np.uint8), np.asarray(labels, dtype=np.int32)

    def files(self, split: str, data_dir: str | None = None) -> tuple[str, ...]:
        """The files load(split, data_dir) would read, without reading them: () for generated data or
        data still to download; DatasetNotFoundError (naming where it looked) when there are none."""
        if split not in SPLITS:
            raise ValueError(f"Unknown split {split!r}; expected one of {list(SPLITS)}.")
        return tuple(self.locate(split, data_dir)) if self.locate is not None else ()

    def input_fn(self, mode: str, data_dir: str | None = None, **options: Any) -> InputFn:
        """Return `input_fn(params) -> tf.data.Dataset` for mode "train", "eval" or "infer".

        Options: seed (shuffle/augment order; also passed to loaders taking one), shuffle_buffer,
        augment (bool, train only), split (default: train for "train", test otherwise); the rest
        go to the loader (e.g. synthetic's image_shape, cifar10's download).
        Data is read on the first call, or earlier by `input_fn.load()` (which returns it: a caller that must
        not write anything before the data is known good calls it first), and reused by later calls.
        """
        pipeline.check_mode(mode)
        load_options = {k: v for k, v in options.items() if k not in _PIPELINE_OPTIONS}
        if "seed" in options and "seed" in inspect.signature(self.loader).parameters:
            load_options["seed"] = options["seed"]  # e.g. synthetic data is generated from it
        self._check_load_options(load_options)
        split = options.get("split", "train" if mode == pipeline.TRAIN else "test")
        if split not in SPLITS:
            raise ValueError(f"Unknown split {split!r}; expected one of {list(SPLITS)}.")
        augment = self.augment if options.get("augment", True) else None
        cache: list[tuple[np.ndarray, np.ndarray]] = []

        def load() -> tuple[np.ndarray, np.ndarray]:
            if not cache:
                cache.append(self.load(split, data_dir, **load_options))
            return cache[0]

        def input_fn(params: Mapping[str, Any]) -> tf.data.Dataset:
            images, labels = load()
            return pipeline.make_dataset(
                images,
                labels,
                mode,
                params,
                seed=options.get("seed"),
                shuffle_buffer=options.get("shuffle_buffer"),
                augment=augment,
            )

        input_fn.load = load
        return input_fn

    def _check_load_options(self, load_options: Mapping[str, Any]) -> None:
        """Fail at input_fn construction, not at first batch, on a misspelt option."""
        try:
            inspect.signature(self.loader).bind("train", None, **load_options)
        except TypeError:
            accepted = list(inspect.signature(self.loader).parameters)[2:]
            raise TypeError(
                f"Dataset {self.name!r} got unknown option(s) {sorted(load_options)}; "
                f"accepted: {sorted({*_PIPELINE_OPTIONS, *accepted})}."
            ) from None
