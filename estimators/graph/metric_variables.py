"""Variables that hold evaluation state, made local in a TF1 graph as 2.15's metric variables were."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import tensorflow as tf

_KEYS = tf.compat.v1.GraphKeys


@contextlib.contextmanager
def made_as_metric_variables() -> Iterator[None]:
    """In a TF1 graph, the global variables the block makes (metric_fn's metrics, Keras 3 compile()'s loss
    tracker) become LOCAL and METRIC variables: no Saver looks for them in a checkpoint (one written by the
    TF2 path has none) and each session initialises them afresh. Eagerly or in a tf.function: nothing."""
    if tf.executing_eagerly() or tf.inside_function():
        yield
        return
    made_before = {id(variable) for variable in tf.compat.v1.global_variables()}
    yield
    global_variables = tf.compat.v1.get_collection_ref(_KEYS.GLOBAL_VARIABLES)
    made = [variable for variable in global_variables if id(variable) not in made_before]
    global_variables[:] = [variable for variable in global_variables if id(variable) in made_before]
    for collection in (_KEYS.LOCAL_VARIABLES, _KEYS.METRIC_VARIABLES):
        present = {id(variable) for variable in tf.compat.v1.get_collection(collection)}
        for variable in made:
            if id(variable) not in present:
                tf.compat.v1.add_to_collection(collection, variable)
