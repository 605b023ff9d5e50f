"""The per-replica step functions: call model_fn under the variable store and check its spec."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import keras
import tensorflow as tf

from estimators.distribute.inputs import split_element
from estimators.mode_keys import ModeKeys
from estimators.runtime.model_fn_call import ModelFnCall, call_model_fn, model_fn_args
from estimators.runtime.variable_store import VariableStore
from estimators.specs import EstimatorSpec, TPUEstimatorSpec, validate_spec


@dataclass
class StepResult:
    """What a model_fn call left behind that the engine reads outside the replica step."""

    metric_objects: dict | None = None
    metric_fn: Callable | None = None


class ModelFnSteps:
    """Builds per-replica train/eval/predict steps around one user model_fn."""

    def __init__(self, model_fn: Callable, params: dict, config: Any, store: VariableStore,
                 num_replicas: int, static_shapes: bool, jit_compile: bool = False):
        self._model_fn = model_fn
        self._args = model_fn_args(model_fn)
        self._params = params
        self._config = config
        self._store = store
        self._num_replicas = num_replicas
        self._static_shapes = static_shapes
        self._jit_compile = jit_compile
        self.last = StepResult()
        self.optimizers: list = []

    def _compiled(self, step: Callable) -> Callable:
        """The step as graph code, compiled by XLA on its replica's device when jit_compile is set.

        model_fn runs as plain graph code, as tf.estimator ran it: AutoGraph does not rewrite it
        (nor Keras, nor the engine), which would cost seconds of tracing; data-dependent control
        flow in a model_fn uses tf.cond / tf.while_loop.
        """
        step = tf.autograph.experimental.do_not_convert(step)
        return tf.function(step, jit_compile=True) if self._jit_compile else step

    def call(self, mode: str, features: Any, labels: Any, batch_size: int | None):
        """Calls model_fn once under the variable store; returns (checked spec, call record)."""
        record = ModelFnCall(mode, self._num_replicas)
        params = dict(self._params, batch_size=batch_size)
        with self._store.scope(mode) as used:
            record.variables = used
            spec = call_model_fn(self._model_fn, self._args, record, features, labels, params, self._config)
        return validate_spec(spec, mode), record

    def train(self, batch_size: int) -> Callable:
        def step(element):
            features, labels = split_element(element, ModeKeys.TRAIN)
            spec, record = self.call(ModeKeys.TRAIN, features, labels, batch_size)
            if self._num_replicas > 1 and not record.optimizers:
                raise ValueError(
                    f"model_fn's train_op did not come from CrossShardOptimizer, under {self._num_replicas} "
                    "replicas. A bare Keras optimizer sums the replicas' gradients (an update "
                    f"{self._num_replicas} times too large for a mean loss); wrap it: "
                    "CrossShardOptimizer(keras.optimizers.Adam(...)).minimize(loss)."
                )
            self.optimizers = list(record.optimizers)
            learning_rate = record.optimizers[0].learning_rate if record.optimizers else 0.0
            with tf.control_dependencies(tf.nest.flatten(spec.train_op)):
                loss = tf.cast(tf.identity(spec.loss), tf.float32)
            return loss, tf.cast(learning_rate, tf.float32)

        return self._compiled(step)

    def evaluate(self, batch_size: int) -> Callable:
        def step(element):
            (features, labels), mask = split_element(element[0], ModeKeys.EVAL), element[1]
            spec, _ = self.call(ModeKeys.EVAL, features, labels, batch_size)
            real = tf.reduce_sum(tf.cast(mask, tf.float32))
            loss = tf.cast(spec.loss, tf.float32)
            weighted_loss = tf.where(real > 0, loss * real, 0.0)
            tensors = self._metric_tensors(spec)
            return weighted_loss, real, tensors, mask

        return self._compiled(step)

    def _metric_tensors(self, spec) -> Any:
        if isinstance(spec, TPUEstimatorSpec) and spec.eval_metrics is not None:
            metric_fn, tensors = spec.eval_metrics
            self.last = StepResult(metric_fn=metric_fn)
            return tensors
        if isinstance(spec, EstimatorSpec) and spec.eval_metric_ops:
            if self._static_shapes:
                raise ValueError(
                    "EstimatorSpec.eval_metric_ops are updated inside model_fn, where padded rows of "
                    "a static-shape (TPU) evaluation would reach them. Return "
                    "TPUEstimatorSpec(eval_metrics=(metric_fn, tensors)) instead."
                )
            check_metrics(spec.eval_metric_ops)
            self.last = StepResult(metric_objects=dict(spec.eval_metric_ops))
        else:
            self.last = StepResult()
        return ()

    def predict(self, batch_size: int | None) -> Callable:
        """Predictions and mask, in the eval step's (loss, real rows, rows, mask) layout."""
        def step(element):
            features, labels = split_element(element[0], ModeKeys.PREDICT)
            spec, _ = self.call(ModeKeys.PREDICT, features, labels, batch_size)
            real = tf.reduce_sum(tf.cast(element[1], tf.float32))
            return tf.constant(0.0), real, spec.predictions, element[1]

        return self._compiled(step)


def check_metrics(metrics: Any) -> dict:
    """ValueError unless `metrics` maps names to Keras metrics."""
    if not isinstance(metrics, dict):
        raise ValueError(f"metric_fn must return a dict of name -> keras.metrics.Metric, got {type(metrics).__name__}.")
    for name, metric in metrics.items():
        if not isinstance(metric, keras.metrics.Metric):
            raise ValueError(
                f"metric {name!r} is a {type(metric).__name__}; return keras.metrics.Metric objects "
                "(tf.compat.v1.metrics (value, update_op) pairs need sessions)."
            )
    return metrics
