"""Class labels for classification heads: ids checked to lie in [0, n_classes), or strings looked up in
label_vocabulary; and the string class names predictions carry."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf


def check_vocabulary(label_vocabulary: Sequence[str] | None, n_classes: int) -> None:
    """2.15's constructor checks: a list or tuple of n_classes distinct strings."""
    if label_vocabulary is None:
        return
    if not isinstance(label_vocabulary, (list, tuple)):
        raise ValueError(f"label_vocabulary should be a list or a tuple. Given type: {type(label_vocabulary)}")
    if len(label_vocabulary) != n_classes:
        raise ValueError(f"label_vocabulary must have n_classes={n_classes} entries, got {len(label_vocabulary)}.")
    if len(set(label_vocabulary)) != len(label_vocabulary):
        raise ValueError(f"label_vocabulary must not contain duplicates: {label_vocabulary}.")


def class_ids(labels: tf.Tensor, n_classes: int, label_vocabulary: Sequence[str] | None) -> tf.Tensor:
    """int64 class ids from `labels` ([batch, d]): strings through the vocabulary (unknown ones fail), numbers
    checked to be whole ids in range."""
    if label_vocabulary is not None:
        if labels.dtype != tf.string:
            raise ValueError(f"Labels dtype should be string when label_vocabulary is given, got {labels.dtype}.")
        table = tf.compat.v1.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(list(label_vocabulary), tf.range(len(label_vocabulary),
                                                                                  dtype=tf.int64)),
            default_value=-1, name="class_id_lookup")
        ids = table.lookup(labels)
        check = tf.debugging.assert_non_negative(ids, message=f"Labels must be in label_vocabulary "
                                                 f"{list(label_vocabulary)}")
    else:
        if labels.dtype == tf.string:
            raise ValueError("Labels are strings: give label_vocabulary to map them to class ids.")
        if labels.dtype.is_floating:
            ids = tf.cast(labels, tf.int64)
            whole = tf.debugging.assert_equal(tf.cast(ids, labels.dtype), labels,
                                              message="Labels must be whole class ids")
        else:
            ids, whole = tf.cast(labels, tf.int64), tf.no_op()
        with tf.control_dependencies([whole]):
            check = tf.debugging.assert_less(ids, tf.constant(n_classes, tf.int64),
                                             message=f"Labels must be < n_classes={n_classes}")
        check = tf.group(check, tf.debugging.assert_non_negative(ids, message="Labels must be >= 0"))
    with tf.control_dependencies([check]):
        return tf.identity(ids)


def class_names(n_classes: int, label_vocabulary: Sequence[str] | None) -> tf.Tensor:
    """The classes' names as a string vector: the vocabulary, or the ids written out ('0', '1', ...)."""
    if label_vocabulary is not None:
        return tf.constant(list(label_vocabulary), tf.string)
    return tf.strings.as_string(tf.range(n_classes))


def ids_to_names(ids: tf.Tensor, n_classes: int, label_vocabulary: Sequence[str] | None) -> tf.Tensor:
    """String class names for int64 `ids`."""
    if label_vocabulary is None:
        return tf.strings.as_string(ids, name="str_classes")
    return tf.gather(tf.constant(list(label_vocabulary), tf.string), ids)


def tiled(row: tf.Tensor, batch_of: tf.Tensor) -> tf.Tensor:
    """`row` repeated once per example of `batch_of` ([batch, ...])."""
    return tf.tile(tf.expand_dims(row, 0), [tf.shape(batch_of)[0], 1])
