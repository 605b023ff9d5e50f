"""The Keras model's current weights as the initial values of the copy that model_fn rebuilds.

tf.estimator 2.15 started a Keras estimator from the model's weights at conversion time (it saved
them to model_dir/keras and warm-started from there). Here the copy model_fn rebuilds from the
model's config creates its variables in the same order every time, so the weights are handed to
those variables as their initial values when the engine's variable store first creates them: no
extra checkpoint, and a checkpoint in model_dir still takes precedence (it is restored after).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from estimators import log as logging


class InitialWeights:
    """Which variable a rebuild of the model creates n-th, and the Keras model's value for it (if any)."""

    def __init__(self, keras_model: Any, rebuild: Callable[[], Any], outside_functions_only: Callable | None = None):
        """`outside_functions_only(copy)`: ids of the variables a rebuild creates only outside tf.function
        (so not inside model_fn), left out of the plan; tf_keras models' step counters."""
        created: list[tuple[str | None, Any]] = []

        def record(next_creator, **kwargs):
            variable = next_creator(**kwargs)
            created.append((kwargs.get("name"), variable))
            return variable

        # In a TF1 graph (a model made under tf.Graph().as_default()) the copy is built in a graph of its own, as
        # 2.15 cloned it: in the model's graph its layers would be renamed (dense_1 beside the model's dense).
        own_graph = tf.Graph().as_default() if not tf.executing_eagerly() and not tf.inside_function() \
            else contextlib.nullcontext()
        with own_graph, tf.variable_creator_scope(record):
            copy = rebuild()
        source, rebuilt = _weights_of(keras_model), _weights_of(copy)
        if source and not rebuilt:
            logging.warning(
                "The Keras model %s has weights, but rebuilt from its config it has none until it is called "
                "(a subclassed model?): the estimator starts from freshly initialised weights, as "
                "tf.estimator 2.15 did for such models.", keras_model.name)
        elif len(source) != len(rebuilt) or any(_differ(s, r) for s, r in zip(source, rebuilt, strict=False)):
            raise ValueError(
                f"The Keras model {keras_model.name!r} rebuilt from its get_config() has other weights than the "
                f"model itself ({_listing(rebuilt)} vs {_listing(source)}); its config does not describe it. "
                "Implement get_config()/from_config() for its custom layers, or pass custom_objects.")
        values = {}
        if rebuilt:
            for weight, value in zip(rebuilt, keras_model.get_weights(), strict=True):
                values[id(variable_of(weight))] = np.array(value)
            found = {id(variable) for _, variable in created}
            if not set(values) <= found:
                raise RuntimeError("Could not match the rebuilt model's weights to the variables it created.")
        skipped = outside_functions_only(copy) if outside_functions_only is not None else set()
        self._plan = [(name, values.get(id(variable))) for name, variable in created if id(variable) not in skipped]

    @property
    def count(self) -> int:
        """How many weights start from the Keras model's values."""
        return sum(value is not None for _, value in self._plan)

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Within the block (one rebuild of the model), its variables start from the Keras model's weights."""
        plan = self._plan
        counter = itertools.count()

        def substitute(next_creator, **kwargs):
            index = next(counter)
            if index >= len(plan):
                raise RuntimeError(_changed(f"more than {len(plan)}"))
            name, value = plan[index]
            if value is not None:
                if kwargs.get("name") != name or _requested_shape(kwargs) not in (None, value.shape):
                    raise RuntimeError(_changed(f"{kwargs.get('name')!r} where it created {name!r}"))
                kwargs["initial_value"] = value
            return next_creator(**kwargs)

        with tf.variable_creator_scope(substitute):
            yield
        made = next(counter)
        if made != len(plan):
            raise RuntimeError(_changed(f"{made} variables instead of {len(plan)}"))


def _weights_of(model: Any) -> list:
    """The model's weights; none for a tf_keras subclassed model not yet called (its `weights` raise then)."""
    try:
        return list(model.weights)
    except ValueError:
        if getattr(model, "built", True):
            raise
        return []


def variable_of(weight: Any) -> Any:
    """The tf.Variable behind a weight: a Keras 3 variable's `.value`, a tf_keras weight itself."""
    value = getattr(weight, "value", None)
    return weight if value is None or callable(value) else value


def _differ(source: Any, rebuilt: Any) -> bool:
    return tuple(source.shape) != tuple(rebuilt.shape) or source.name != rebuilt.name


def _listing(weights: list) -> str:
    return f"{len(weights)}: " + ", ".join(f"{w.name}{list(w.shape)}" for w in weights[:8]) + (
        " ..." if len(weights) > 8 else "")


def _requested_shape(kwargs: dict) -> tuple | None:
    shape = kwargs.get("shape")
    if shape is None:
        initial = kwargs.get("initial_value")
        shape = None if callable(initial) else getattr(initial, "shape", None)
    return tuple(tf.TensorShape(shape).as_list()) if shape is not None else None


def _changed(what: str) -> str:
    return (f"Rebuilding the Keras model inside model_fn created {what} when model_to_estimator rebuilt it "
            "first; its construction is not deterministic, so its weights cannot be carried over.")
