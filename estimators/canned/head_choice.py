"""The head a canned classifier or regressor uses, from its constructor's arguments (as 2.15 chose it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from estimators.canned.heads import BinaryClassHead, Head, MultiClassHead, RegressionHead


def classifier_head(n_classes: int, weight_column: Any, label_vocabulary: Sequence[str] | None,
                    loss_reduction: Any) -> Head:
    """BinaryClassHead for 2 classes, MultiClassHead for more."""
    if n_classes is None or n_classes < 2:
        raise ValueError(f"n_classes must be > 1 for classification: {n_classes}")
    if n_classes == 2:
        return BinaryClassHead(weight_column=weight_column, label_vocabulary=label_vocabulary,
                               loss_reduction=loss_reduction)
    return MultiClassHead(n_classes, weight_column=weight_column, label_vocabulary=label_vocabulary,
                          loss_reduction=loss_reduction)


def regressor_head(label_dimension: int, weight_column: Any, loss_reduction: Any) -> Head:
    return RegressionHead(label_dimension=label_dimension, weight_column=weight_column,
                          loss_reduction=loss_reduction)


def checked_head(head: Any) -> Head:
    if not isinstance(head, Head):
        raise TypeError(f"head must be an estimators.canned head (BinaryClassHead, MultiClassHead, ...), got "
                        f"{type(head).__name__}.")
    return head
