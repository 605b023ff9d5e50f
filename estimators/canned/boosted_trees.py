"""BoostedTreesClassifier / BoostedTreesRegressor: refused with one error that names what to use instead.

tf.estimator dropped its boosted trees in 2.10 (they lived on TensorFlow's unmaintained BoostedTrees ops), so no
2.15 program can have used them; programs from before that port to TensorFlow Decision Forests or YDF.
"""

from __future__ import annotations

from typing import Any, NoReturn

WHAT_INSTEAD = (
    "tf.estimator removed its boosted trees in 2.10 and this package does not provide them. Train gradient boosted "
    "trees with YDF (pip install ydf; ydf.GradientBoostedTreesLearner(label=...).train(dataframe)) or TensorFlow "
    "Decision Forests (pip install tensorflow_decision_forests; tfdf.keras.GradientBoostedTreesModel), which read "
    "the same tabular features; or use DNNClassifier / LinearClassifier here.")


class BoostedTreesUnavailableError(NotImplementedError):
    """Raised by every boosted-trees name: what was asked for, and what to use instead."""


def _refuse(name: str) -> NoReturn:
    raise BoostedTreesUnavailableError(f"{name} is not available: {WHAT_INSTEAD}")


class BoostedTreesClassifier:
    """Refused when built (2.9's tf.estimator.BoostedTreesClassifier, train_in_memory or streaming)."""

    def __init__(self, *args: Any, **kwargs: Any):
        del args, kwargs
        _refuse("BoostedTreesClassifier")


class BoostedTreesRegressor:
    """Refused when built (2.9's tf.estimator.BoostedTreesRegressor, train_in_memory or streaming)."""

    def __init__(self, *args: Any, **kwargs: Any):
        del args, kwargs
        _refuse("BoostedTreesRegressor")


class BoostedTreesEstimator:
    """Refused when built (2.9's tf.estimator.experimental.BoostedTreesEstimator with a custom head)."""

    def __init__(self, *args: Any, **kwargs: Any):
        del args, kwargs
        _refuse("BoostedTreesEstimator")


def boosted_trees_classifier_train_in_memory(*args: Any, **kwargs: Any) -> NoReturn:
    """Refused (tf.contrib's in-memory boosted trees classifier)."""
    del args, kwargs
    _refuse("boosted_trees_classifier_train_in_memory")


def boosted_trees_regressor_train_in_memory(*args: Any, **kwargs: Any) -> NoReturn:
    """Refused (tf.contrib's in-memory boosted trees regressor)."""
    del args, kwargs
    _refuse("boosted_trees_regressor_train_in_memory")
