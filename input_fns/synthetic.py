"""Synthetic images of any shape, for smoke tests and benchmarks without data files.

Each class has a fixed random template; an example is its class template blended with noise,
so labels are learnable and a smoke test's loss can fall.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from input_fns.registry import register
from input_fns.source import DatasetSource

NAME = "synthetic"
DEFAULT_IMAGE_SHAPE = (28, 28, 1)
DEFAULT_NUM_CLASSES = 10
DEFAULT_NUM_EXAMPLES = 1024
_SPLIT_STREAM = {"train": 1, "test": 2}


def load(
    split: str,
    data_dir: str | None = None,
    *,
    image_shape: Sequence[int] = DEFAULT_IMAGE_SHAPE,
    num_classes: int = DEFAULT_NUM_CLASSES,
    num_examples: int = DEFAULT_NUM_EXAMPLES,
    seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic (uint8 [N,*image_shape], int32 [N]); train and test share templates, not examples.

    data_dir is ignored (accepted for the common loader signature).
    """
    if num_classes < 1 or num_examples < 1:
        raise ValueError(f"num_classes and num_examples must be >= 1, got {num_classes}, {num_examples}.")
    shape = tuple(int(d) for d in image_shape)
    seed = 0 if seed is None else seed
    templates = np.random.default_rng(seed).uniform(0, 255, size=(num_classes, *shape))
    rng = np.random.default_rng([seed, _SPLIT_STREAM[split]])
    labels = rng.integers(0, num_classes, size=num_examples, dtype=np.int32)
    noise = rng.uniform(0, 255, size=(num_examples, *shape))
    images = (0.5 * templates[labels] + 0.5 * noise).round().astype(np.uint8)
    return images, labels


def make_source(
    image_shape: Sequence[int] = DEFAULT_IMAGE_SHAPE,
    num_classes: int = DEFAULT_NUM_CLASSES,
    num_examples: int = DEFAULT_NUM_EXAMPLES,
) -> DatasetSource:
    """A synthetic source whose metadata matches the given shape, e.g. (32, 32, 3) for CIFAR-sized runs."""
    shape = tuple(int(d) for d in image_shape)
    loader = functools.partial(load, image_shape=shape, num_classes=num_classes, num_examples=num_examples)
    class_names = tuple(f"class_{i}" for i in range(num_classes))
    return DatasetSource(NAME, shape, num_classes, class_names, loader=loader)


@register(NAME)
def _source() -> DatasetSource:
    return make_source()
