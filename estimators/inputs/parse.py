"""What an input_fn returned, as tensors in the current graph: tf.estimator 2.15's util.parse_input_fn_result.

For programs (and hooks) that call an input_fn themselves in a tf.Graph: a Dataset becomes an
initializable iterator whose initializer a returned session hook runs when the session is made; a pair
is (features, labels); anything else is features alone (labels None).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf


class DatasetInitializerHook(tf.compat.v1.train.SessionRunHook):
    """Runs a dataset iterator's initializer when the session is created (and again if it is recreated)."""

    def __init__(self, iterator: Any):
        self._iterator = iterator

    def begin(self) -> None:
        self._initializer = self._iterator.initializer

    def after_create_session(self, session: Any, coord: Any) -> None:
        del coord
        session.run(self._initializer)


def parse_input_fn_result(result: Any) -> tuple[Any, Any, list]:
    """(features, labels, hooks) from an input_fn's result in the current graph (see the module docstring)."""
    hooks = []
    if isinstance(result, tf.compat.v1.data.Dataset | tf.data.Dataset):
        iterator = tf.compat.v1.data.make_initializable_iterator(result)
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, list | tuple):
        if len(result) != 2:
            raise ValueError(f"input_fn should return (features, labels) as a len 2 tuple, or features alone; it "
                             f"returned a {type(result).__name__} of {len(result)} items.")
        return result[0], result[1], hooks
    return result, None, hooks


_DatasetInitializerHook = DatasetInitializerHook  # tf.estimator 2.15's name (util._DatasetInitializerHook)
