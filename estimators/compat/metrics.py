"""tf.compat.v1.metrics `(value, update_op)` pairs in eval_metric_ops and metric_fn, read exactly.

tf.estimator ran every pair's update_op once per batch and evaluated the value tensors once, after
the last batch. In a tf.function every stateful op runs and a value's variable reads happen in
program order, before or after that call's update: a value returned from a step lags (or not)
depending on how the metric was written. So the engine never reads a value from a step. After the
last batch it calls model_fn (or metric_fn) once more on zero-row inputs: the store hands the
recreated metrics their existing variables (same TF1 names), the updates add nothing, and the
values see the final state of every replica (v1 metric variables are ON_READ/SUM; the values are
computed in the cross-replica merge_call). `V1MetricResult` gives each pair the `reset_state()` /
`result()` interface the evaluation loop already uses for Keras metrics.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import keras
import numpy as np
import tensorflow as tf

LOSS_KEY = "loss"


def is_keras_metric(value: Any) -> bool:
    """A Keras 3 metric, or a tf_keras one (TF_USE_LEGACY_KERAS=1, or `import tf_keras`)."""
    if isinstance(value, keras.metrics.Metric):
        return True
    tf_keras_metrics = sys.modules.get("tf_keras.src.metrics.base_metric")
    metric_class = getattr(tf_keras_metrics, "Metric", None)
    return metric_class is not None and isinstance(value, metric_class)


def _is_graph_value(value: Any) -> bool:
    return isinstance(value, (tf.Tensor, tf.Operation, tf.Variable)) or tf.is_tensor(value)


def is_metric_pair(value: Any) -> bool:
    """A `(metric_value, update_op)` tuple as tf.compat.v1.metrics return (tf.estimator's rule: a 2-tuple; the
    value may be a nested structure of tensors, which evaluate() reports with the same nesting)."""
    if not (isinstance(value, tuple) and len(value) == 2 and _is_graph_value(value[1])):
        return False
    leaves = tf.nest.flatten(value[0])
    return bool(leaves) and all(_is_graph_value(v) for v in leaves)


def split_metrics(metrics: Any, what: str) -> tuple[dict, list[str]]:
    """({name: Keras metric}, [names of v1 pairs]) of a metric dict; ValueError naming a bad entry.

    `what` says where the dict came from ("eval_metric_ops", "metric_fn") for the messages.
    """
    if not isinstance(metrics, dict):
        raise ValueError(
            f"{what} must be a dict of name -> keras.metrics.Metric or tf.compat.v1.metrics "
            f"(value, update_op) tuple, got {type(metrics).__name__}."
        )
    if LOSS_KEY in metrics:
        raise ValueError(
            f"{what} has a metric named {LOSS_KEY!r}; evaluate() already reports the mean loss under that "
            "name (as tf.estimator did). Rename the metric."
        )
    if "global_step" in metrics:
        raise ValueError(f"Metric with name `global_step` is not allowed, because Estimator already defines a "
                         f"default metric with the same name: rename {what}['global_step'].")
    objects, pairs = {}, []
    for name, value in metrics.items():
        if is_keras_metric(value):
            objects[name] = value
        elif is_metric_pair(value):
            pairs.append(name)
        else:
            raise ValueError(
                f"{what}[{name!r}] is a {type(value).__name__}; give a keras.metrics.Metric that model_fn "
                "updated, or the (value, update_op) tuple a tf.compat.v1.metrics function returns."
            )
    return objects, pairs


def pair_values(metrics: dict, names: list[str]) -> dict:
    """{name: value tensor} of the v1 pairs `names` in a metric dict (ValueError if one is no longer a pair)."""
    values = {}
    for name in names:
        value = metrics.get(name) if isinstance(metrics, dict) else None
        if not is_metric_pair(value):
            raise ValueError(
                f"Metric {name!r} was a tf.compat.v1.metrics (value, update_op) pair when evaluation was traced "
                "but not when its value was read: model_fn / metric_fn must return the same metrics every call."
            )
        values[name] = tf.nest.map_structure(tf.convert_to_tensor, value[0])
    return values


def reset_local_variable(variable: Any, initial: np.ndarray) -> None:
    """Puts a TF1 local (metric) variable back to its initial value, as local_variables_initializer did.

    A SyncOnRead SUM variable (v1 metric state under a strategy) reads as the sum of its replicas'
    copies: the first copy gets the initial value, the others zero.
    """
    components = list(getattr(variable, "values", None) or [variable])
    summed = (getattr(variable, "synchronization", None) == tf.VariableSynchronization.ON_READ
              and getattr(variable, "aggregation", None) == tf.VariableAggregation.SUM)
    for index, component in enumerate(components):
        value = initial if index == 0 or not summed else np.zeros_like(initial)
        component.assign(value)


class V1MetricResult:
    """One tf.compat.v1 metric of an evaluation, with a Keras metric's reset_state() / result().

    `read` returns every v1 value of its source at once ({name: value}); `reset` puts the TF1
    local variables back to their initial values.
    """

    def __init__(self, name: str, read: Callable[[], dict], reset: Callable[[], None]):
        self.name = name
        self._read = read
        self._reset = reset

    def reset_state(self) -> None:
        self._reset()

    def result(self) -> Any:
        return self._read()[self.name]

    def __repr__(self) -> str:
        return f"V1MetricResult({self.name!r})"
