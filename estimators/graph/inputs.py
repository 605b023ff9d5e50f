"""input_fn in the graph, as tf.estimator called it: once per train/evaluate/predict, in that call's graph.

A Dataset becomes an initializable iterator (initialised when the session is made); an iterator gives
its get_next(); tensors, numpy arrays and Python lists reach model_fn as they are (the graph takes the
latter as constants). A pair is (features, labels); anything else is features alone (labels None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.compat.input_fn_call import bound_input_fn, has_dataset_or_queue_runner, warn_predict_never_ends
from estimators.mode_keys import ModeKeys


class _IteratorInitializer(tf.compat.v1.train.SessionRunHook):
    """Initialises input_fn's iterator when the session is created (and again if it is recreated)."""

    def __init__(self, iterator: Any):
        self._initializer = iterator.initializer

    def after_create_session(self, session, coord) -> None:
        del coord
        session.run(self._initializer)


def input_tensors(input_fn: Callable, *, mode: str, params: dict, config: Any) -> tuple[Any, Any, list]:
    """(features, labels, hooks) from input_fn called in the current graph with the arguments it declares."""
    call = bound_input_fn(input_fn, mode=mode, params=params, config=config)
    with tf.device("/cpu:0"):
        features, labels, hooks = _parse(call())
    if mode == ModeKeys.PREDICT and not has_dataset_or_queue_runner((features, labels),
                                                                    tf.compat.v1.get_default_graph()):
        warn_predict_never_ends()
    return features, labels, hooks


def _parse(result: Any) -> tuple[Any, Any, list]:
    hooks = []
    if isinstance(result, tf.data.Dataset):
        result = tf.compat.v1.data.make_initializable_iterator(result)
    if isinstance(result, tf.compat.v1.data.Iterator):
        try:
            hooks.append(_IteratorInitializer(result))
        except ValueError:  # a one-shot iterator has no initializer to run
            pass
        result = result.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError(f"input_fn must return features or (features, labels); it returned a "
                             f"{type(result).__name__} of {len(result)} items. Return a tuple of two, or a dict of "
                             "features.")
        features, labels = result
    else:
        features, labels = result, None
    return features, labels, hooks  # numpy arrays and Python lists as they are: 2.15's graph took them as constants

