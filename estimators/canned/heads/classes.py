"""Class labels for classification heads: vocabulary strings looked up as class ids, class ids written back as
names, and the vocabulary checks 2.15's constructors made."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf


def check_vocabulary(label_vocabulary: Sequence[str] | None, n_classes: int) -> None:
    """2.15's MultiClassHead checks: a list or tuple of n_classes strings."""
    if label_vocabulary is None:
        return
    if not isinstance(label_vocabulary, (list, tuple)):
        raise ValueError(f"label_vocabulary should be a list or a tuple. Given type: {type(label_vocabulary)}")
    if len(label_vocabulary) != n_classes:
        raise ValueError(f'"label_vocabulary" does not have "n_classes" items. len(label_vocabulary)='
                         f"{len(label_vocabulary)}, n_classes={n_classes}, label_vocabulary={label_vocabulary}")


def lookup_class_ids(labels: tf.Tensor, label_vocabulary: Sequence[str]) -> tf.Tensor:
    """int64 ids of string labels in `label_vocabulary`; a label outside it fails (2.15 gave it id -1, refused as
    'Labels must be >= 0'; the message here names the vocabulary)."""
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(list(label_vocabulary), tf.range(len(label_vocabulary), dtype=tf.int64)),
        default_value=-1, name="class_id_lookup")
    ids = table.lookup(labels)
    message = f"Labels must be >= 0: a label is not in label_vocabulary {list(label_vocabulary)}"
    if tf.executing_eagerly():
        if not bool(tf.reduce_all(ids >= 0)):
            raise ValueError(message)
        return ids
    with tf.control_dependencies([tf.debugging.assert_non_negative(ids, message=message)]):
        return tf.identity(ids)


def ids_to_names(ids: tf.Tensor, label_vocabulary: Sequence[str] | None) -> tf.Tensor:
    """String class names for int64 `ids`: the vocabulary's, or the ids written out."""
    if label_vocabulary is None:
        return tf.strings.as_string(ids, name="str_classes")
    return tf.gather(tf.constant(list(label_vocabulary), tf.string), ids)
