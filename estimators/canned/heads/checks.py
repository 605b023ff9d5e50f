"""The shape and argument checks 2.15's heads made on logits, labels, weights and loss_fn, with its messages: logits
and labels are [D0, D1, ... DN, dim] tensors (a [D0, ... DN] label or weight gets its last axis). Eagerly a bad
shape is a ValueError at once; in a graph a static mismatch is a ValueError, a dynamic one an assertion op."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

LABEL_NONE_ERR_MSG = ("You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: Check that "
                      "your data contains your label feature. Check that your input_fn properly parses and returns "
                      "labels.")
_SPARSE_LABEL_ERR_MSG = ("SparseTensor labels are not supported. Labels must be a Tensor of shape [D0, D1, ..., DN, "
                         "{0}], e.g. [batch_size, {0}].Suggested Fix (1): Check the label feature in your data. Each "
                         "example must contain {0} value(s). If not, your choice of label was probably incorrect. "
                         "Suggested Fix (2): In your input_fn, use tf.sparse_tensor_to_dense() to turn labels into a "
                         "Tensor.")
_MISMATCHED_LABEL_DIM_ERR_MSG = ("Mismatched label shape. Expected labels dimension={}.  Received {}. Suggested Fix: "
                                 "If your classifier expects one-hot encoding label, check your n_classes argument to "
                                 "the estimator and/or the shape of your label. Otherwise, check the shape of your "
                                 "label.")
_LABEL_SHAPE_ERR_MSG = ("labels shape must be [D0, D1, ... DN, {}]. Suggested Fix: check your n_classes argument to "
                        "the head and/or the shape of your label.")
_LOGITS_SHAPE_ERR_MSG = "logits shape must be [D0, D1, ... DN, logits_dimension]"
_LOSS_FN_ARGS = ("labels", "logits", "features", "loss_reduction")


def _shape_tuple(tensor: tf.Tensor) -> tuple:
    return tuple(tensor.shape.as_list())


def check_logits_final_dim(logits: Any, expected_logits_dimension: Any) -> tf.Tensor:
    """float32 logits of rank >= 2 whose last axis is `expected_logits_dimension`."""
    with tf.name_scope("logits"):
        logits = tf.cast(logits, tf.float32)
        if tf.executing_eagerly():
            if logits.shape.rank < 2:
                raise ValueError(f"logits must have rank at least 2.  Received rank {logits.shape.rank}, shape "
                                 f"{_shape_tuple(logits)}")
            if isinstance(expected_logits_dimension, int) and logits.shape[-1] != expected_logits_dimension:
                raise ValueError(f"{_LOGITS_SHAPE_ERR_MSG}, got {_shape_tuple(logits)}.")
            return logits
        logits_shape = tf.shape(logits)
        rank_check = tf.compat.v1.debugging.assert_rank_at_least(logits, 2, data=[logits_shape],
                                                                 message=_LOGITS_SHAPE_ERR_MSG)
        with tf.control_dependencies([rank_check]):
            static = logits.shape
            if static.rank is not None and static[-1] is not None:
                if isinstance(expected_logits_dimension, int) and static[-1] != expected_logits_dimension:
                    raise ValueError(f"{_LOGITS_SHAPE_ERR_MSG}, got {static}.")
                return logits
            dim_check = tf.compat.v1.debugging.assert_equal(expected_logits_dimension, logits_shape[-1],
                                                            data=[logits_shape], message=_LOGITS_SHAPE_ERR_MSG)
            with tf.control_dependencies([dim_check]):
                return tf.identity(logits)


def check_dense_labels_match_logits_and_reshape(labels: Any, logits: tf.Tensor,
                                                expected_labels_dimension: int) -> tf.Tensor:
    """Dense labels of shape logits.shape[:-1] + [expected_labels_dimension] (one axis less gets it appended)."""
    if labels is None:
        raise ValueError(LABEL_NONE_ERR_MSG)
    with tf.name_scope("labels"):
        labels = tf.compat.v1.convert_to_tensor_or_sparse_tensor(labels)
        if isinstance(labels, tf.SparseTensor):
            raise ValueError(_SPARSE_LABEL_ERR_MSG.format(expected_labels_dimension))
        if labels.shape.rank is not None and logits.shape.rank is not None \
                and labels.shape.rank == logits.shape.rank - 1:
            labels = tf.expand_dims(labels, -1)
        if tf.executing_eagerly():
            shape = _shape_tuple(labels)
            if len(shape) < 2:
                raise ValueError(f"labels must have rank at least 2.  Received rank {len(shape)}, shape {shape}")
            if shape[-1] != expected_labels_dimension:
                raise ValueError(_MISMATCHED_LABEL_DIM_ERR_MSG.format(expected_labels_dimension, shape[-1]))
            expected = _shape_tuple(logits)[:-1] + (expected_labels_dimension,)
            if expected != shape:
                raise ValueError(f"{_LABEL_SHAPE_ERR_MSG.format(expected_labels_dimension)}, expected_labels_shape: "
                                 f"{expected}. labels_shape: {shape}.")
            return labels
        message = _LABEL_SHAPE_ERR_MSG.format(expected_labels_dimension)
        rank_check = tf.compat.v1.debugging.assert_rank_at_least(labels, 2, message=message)
        with tf.control_dependencies([rank_check]):
            if labels.shape.rank is not None and labels.shape[-1] is not None \
                    and labels.shape[-1] != expected_labels_dimension:
                raise ValueError(_MISMATCHED_LABEL_DIM_ERR_MSG.format(expected_labels_dimension, labels.shape[-1]))
            expected = tf.concat([tf.shape(logits)[:-1], [expected_labels_dimension]], axis=0)
            actual = tf.shape(labels)
            shape_check = tf.compat.v1.debugging.assert_equal(
                expected, actual, message=message,
                data=["expected_labels_shape: ", expected, "labels_shape: ", actual])
            with tf.control_dependencies([shape_check]):
                return tf.identity(labels)


def _weight_key_and_normalizer(weight_column: Any) -> tuple[str, Callable | None]:
    if isinstance(weight_column, str):
        return weight_column, None
    if type(weight_column).__name__ not in ("NumericColumn", "_NumericColumn"):
        raise TypeError(f"Weight column must be either a string or NumericColumn. Given type: "
                        f"{type(weight_column)}.")
    return weight_column.key, weight_column.normalizer_fn


def get_weights_and_check_match_logits(features: dict, weight_column: Any, logits: tf.Tensor,
                                       allow_per_logit_weights: bool = False) -> Any:
    """The example weights as float32 [D0, ... DN, 1] (or [D0, ... DN, logits_dimension] when allowed), 1.0
    without a weight column; a weight column is a feature's key or a numeric_column (its normalizer_fn applied)."""
    if allow_per_logit_weights:
        err_msg = "weights shape must be [D0, D1, ... DN], [D0, D1, ... DN, 1] or [D0, D1, ... DN, logits_dimension]"
    else:
        err_msg = "weights shape must be [D0, D1, ... DN] or [D0, D1, ... DN, 1]"
    if weight_column is None:
        return 1.0
    key, normalizer_fn = _weight_key_and_normalizer(weight_column)
    with tf.name_scope("weights"):
        if key not in (features or {}):
            raise ValueError(f"weight_column {key!r} is not among the features ({sorted(features or {})}).")
        weights = features[key]
        if isinstance(weights, tf.SparseTensor):
            raise ValueError(f"The corresponding Tensor of numerical column must be a Tensor. SparseTensor is not "
                             f"supported. key: {key}")
        weights = tf.convert_to_tensor(weights)
        if normalizer_fn is not None:
            weights = normalizer_fn(weights)
        if not (weights.dtype.is_floating or weights.dtype.is_integer):
            raise ValueError(f"Weight column should be castable to float. Given dtype: {weights.dtype}")
        weights = tf.cast(weights, tf.float32, name="weights")
        one_less = (weights.shape.rank is not None and logits.shape.rank is not None
                    and weights.shape.rank == logits.shape.rank - 1)
        if tf.executing_eagerly():
            weights_shape, logits_shape = _shape_tuple(weights), _shape_tuple(logits)
            if one_less:
                if logits_shape[:-1] != weights_shape:
                    raise ValueError(f"{err_msg}, logits_shape: {logits_shape}. weights_shape: {weights_shape}.")
                return tf.expand_dims(weights, -1)
            allowed = [logits_shape[:-1] + (1,)] + ([logits_shape] if allow_per_logit_weights else [])
            if weights_shape not in allowed:
                raise ValueError(f"{err_msg}, logits_shape: {logits_shape}. weights_shape: {weights_shape}.")
            return weights
        weights_shape, logits_shape = tf.shape(weights), tf.shape(logits)
        data = ["logits_shape: ", logits_shape, "weights_shape: ", weights_shape]
        if one_less:
            check = tf.compat.v1.debugging.assert_equal(logits_shape[:-1], weights_shape, message=err_msg, data=data)
            with tf.control_dependencies([check]):
                return tf.expand_dims(weights, -1)
        per_example = tf.concat([logits_shape[:-1], [1]], axis=0)
        if allow_per_logit_weights:
            matches = tf.reduce_any([_same_shape(logits_shape, weights_shape),
                                     _same_shape(per_example, weights_shape)])
            check = tf.debugging.Assert(matches, [err_msg, *data])
        else:
            check = tf.compat.v1.debugging.assert_equal(per_example, weights_shape, message=err_msg, data=data)
        with tf.control_dependencies([check]):
            return tf.identity(weights)


def _same_shape(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
    """Whether two shape vectors are equal (False, not an error, for different ranks)."""
    return tf.logical_and(tf.equal(tf.size(a), tf.size(b)),
                          tf.reduce_all(tf.equal(tf.pad(a, [[0, tf.maximum(tf.size(b) - tf.size(a), 0)]]),
                                                 tf.pad(b, [[0, tf.maximum(tf.size(a) - tf.size(b), 0)]]))))


def check_label_range(labels: tf.Tensor, n_classes: int, message: str | None = None) -> tf.Tensor:
    """`labels` checked to lie in [0, n_classes)."""
    with tf.name_scope("check_label_range"):
        if tf.executing_eagerly():
            if not bool(tf.reduce_all(labels <= n_classes - 1)):
                raise ValueError(message or f"Labels must be <= {n_classes} - 1")
            if not bool(tf.reduce_all(labels >= 0)):
                raise ValueError(message or "Labels must be >= 0")
            return labels
        below = tf.compat.v1.debugging.assert_less_equal(labels, tf.cast(n_classes - 1, labels.dtype),
                                                         message=message or "Labels must be <= n_classes - 1")
        non_negative = tf.compat.v1.debugging.assert_non_negative(labels, message=message or "Labels must be >= 0")
        with tf.control_dependencies([below, non_negative]):
            return tf.identity(labels)


def fn_args(fn: Callable) -> tuple:
    """The argument names of `fn` (a functools.partial's remaining ones; a bound method's without self)."""
    parameters = inspect.signature(fn).parameters.values()
    return tuple(p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))


def validate_loss_fn_args(loss_fn: Callable) -> None:
    """loss_fn takes labels and logits, and optionally features and loss_reduction, nothing else."""
    args = fn_args(loss_fn)
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError(f"loss_fn must contain argument: {required}. Given arguments: {args}")
    unexpected = [arg for arg in args if arg not in _LOSS_FN_ARGS]
    if unexpected:
        raise ValueError(f"loss_fn has unexpected args: {unexpected}")


def call_loss_fn(loss_fn: Callable, labels: tf.Tensor, logits: tf.Tensor, features: dict | None,
                 expected_loss_dim: int = 1) -> tf.Tensor:
    """loss_fn's unreduced loss, checked to be [D0, ... DN, expected_loss_dim] for logits [D0, ... DN, dim]."""
    kwargs = {"features": features} if "features" in fn_args(loss_fn) else {}
    message = f"loss_fn must return Tensor of shape [D0, D1, ... DN, {expected_loss_dim}]. "
    with tf.name_scope("call_loss_fn"):
        loss = loss_fn(labels=labels, logits=logits, **kwargs)
        if tf.executing_eagerly():
            loss_shape, logits_shape = _shape_tuple(loss), _shape_tuple(logits)
            if loss_shape != logits_shape[:-1] + (expected_loss_dim,):
                raise ValueError(message, "logits_shape: ", logits_shape, "loss_shape: ", loss_shape)
            return loss
        logits_shape = tf.shape(logits, name="logits_shape")
        expected = tf.concat([logits_shape[:-1], [expected_loss_dim]], axis=0, name="expected_loss_shape")
        loss_shape = tf.shape(loss, name="loss_shape")
        check = tf.debugging.Assert(_same_shape(loss_shape, expected),
                                    [message, "logits_shape: ", logits_shape, "loss_shape: ", loss_shape],
                                    name="check_loss_shape")
        with tf.control_dependencies([check]):
            return tf.identity(loss)


def check_prediction_keys(pred_keys: Sequence[str], valid_keys: Sequence[str]) -> None:
    for key in pred_keys:
        if key not in valid_keys:
            raise ValueError(f"Prediction key must be in PredictionKeys, given: {key}.Valid prediction keys include "
                             f"{valid_keys}.")


def check_label_vocabulary(label_vocabulary: Any, message: str = "label_vocabulary should be a list or a tuple. "
                                                                 "Given type: {}") -> None:
    if label_vocabulary is not None and not isinstance(label_vocabulary, (list, tuple)):
        raise ValueError(message.format(type(label_vocabulary)))


def check_thresholds(thresholds: Any, message: str) -> tuple:
    """`thresholds` as a tuple, each in (0, 1); `message` formats the offending threshold(s)."""
    thresholds = tuple(thresholds) if thresholds else ()
    for threshold in thresholds:
        if threshold <= 0.0 or threshold >= 1.0:
            raise ValueError(message.format(threshold=threshold, thresholds=(thresholds,)))
    return thresholds
