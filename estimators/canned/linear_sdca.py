"""LinearSDCA (2.15's tf.estimator.experimental.LinearSDCA): its settings and 2.15's checks, then a clear refusal.

2.15 trained a linear model by stochastic dual coordinate ascent with its own example-state hash table and
a chief hook applying the weight deltas; this port does not implement that trainer (TF's Sdca* kernels
exist, the state table and its checkpointing do not), so an estimator given a LinearSDCA refuses at
construction instead of training differently.
"""

from __future__ import annotations

from typing import Any

from estimators.canned.linear_model import is_v2_columns

_REFUSAL = ("LinearSDCA (stochastic dual coordinate ascent) is not implemented in this port of tf.estimator: "
            "train the linear model with a gradient optimizer instead, e.g. optimizer='Ftrl' (2.15's default) or "
            "tf_keras.optimizers.legacy.Ftrl(l1_regularization_strength=..., l2_regularization_strength=...).")


class LinearSDCA:
    """2.15's SDCA settings for LinearClassifier / LinearRegressor (held, checked, not trained with here)."""

    def __init__(self, example_id_column: str, num_loss_partitions: int = 1, num_table_shards: int | None = None,
                 symmetric_l1_regularization: float = 0.0, symmetric_l2_regularization: float = 1.0,
                 adaptive: bool = False):
        self._example_id_column = example_id_column
        self._num_loss_partitions = num_loss_partitions
        self._num_table_shards = num_table_shards
        self._symmetric_l1_regularization = symmetric_l1_regularization
        self._symmetric_l2_regularization = symmetric_l2_regularization
        self._adaptive = adaptive


def _common_checks(feature_columns: Any, sparse_combiner: str) -> None:
    if sparse_combiner != "sum":
        raise ValueError('sparse_combiner must be "sum" when optimizer is a LinearSDCA object.')
    if not is_v2_columns(feature_columns or ()):
        raise ValueError("V2 feature columns required when optimizer is a LinearSDCA object.")


def check_for_classifier(feature_columns: Any, n_classes: int, optimizer: Any, sparse_combiner: str) -> None:
    """2.15's ValueErrors for LinearClassifier(optimizer=LinearSDCA(...)), then NotImplementedError."""
    if not isinstance(optimizer, LinearSDCA):
        return
    _common_checks(feature_columns, sparse_combiner)
    if n_classes > 2:
        raise ValueError("LinearSDCA cannot be used in a multi-class setting.")
    raise NotImplementedError(_REFUSAL)


def check_for_regressor(feature_columns: Any, label_dimension: int, optimizer: Any, sparse_combiner: str) -> None:
    """2.15's ValueErrors for LinearRegressor(optimizer=LinearSDCA(...)), then NotImplementedError."""
    if not isinstance(optimizer, LinearSDCA):
        return
    _common_checks(feature_columns, sparse_combiner)
    if label_dimension > 1:
        raise ValueError("LinearSDCA can only be used with one-dimensional label.")
    raise NotImplementedError(_REFUSAL)


def check_for_estimator(optimizer: Any) -> None:
    """LinearEstimator(optimizer=LinearSDCA(...)): refused as for the classifier and regressor."""
    if isinstance(optimizer, LinearSDCA):
        raise NotImplementedError(_REFUSAL)
