"""CrossShardOptimizer: one update from the gradients of every replica, as TPUEstimator's did.

Keras 3 optimizers already SUM gradients across replicas before applying them (in replica
context). So "mean" scales each replica's gradient by 1/N before handing it over: one all-reduce,
and N replicas on a global batch B take the same step as one replica on B.
"""

from __future__ import annotations

from collections.abc import Iterable

import keras
import tensorflow as tf

from estimators.runtime.model_fn_call import current_call

_REDUCTIONS = ("mean", "sum")


def _as_tf_variable(var):
    return var.value if isinstance(var, keras.Variable) else var


def _scale(grad, factor: float):
    if grad is None:
        return None
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values * tf.cast(factor, grad.values.dtype), grad.indices, grad.dense_shape)
    return grad * tf.cast(factor, grad.dtype)


class CrossShardOptimizer:
    """Wraps a Keras 3 optimizer so gradients are all-reduced across replicas, then applied once."""

    def __init__(self, optimizer: keras.optimizers.Optimizer, reduction: str = "mean", name: str | None = None):
        if not isinstance(optimizer, keras.optimizers.Optimizer):
            raise ValueError(
                f"CrossShardOptimizer wraps a Keras 3 optimizer (keras.optimizers.*), got {type(optimizer).__name__}."
            )
        if reduction not in _REDUCTIONS:
            raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}.")
        self.optimizer = optimizer
        self.reduction = reduction
        self.name = name or f"CrossShard{type(optimizer).__name__}"

    @property
    def learning_rate(self):
        return self.optimizer.learning_rate

    @property
    def iterations(self):
        return self.optimizer.iterations

    def minimize(self, loss: tf.Tensor, var_list: Iterable | None = None, global_step=None):
        """Applies the gradients of `loss` (default: every trainable variable model_fn created).

        `global_step` is accepted for tf.compat.v1 signatures and ignored: the engine owns it.
        """
        del global_step
        call = current_call()
        if var_list is None:
            if call is None:
                raise ValueError("minimize() without var_list works only inside a model_fn run by an Estimator.")
            var_list = call.trainable_variables
        var_list = list(var_list)
        if not var_list:
            raise ValueError("minimize() found no trainable variables; build the model before minimizing.")
        grads = tf.gradients(loss, [_as_tf_variable(v) for v in var_list])
        if all(g is None for g in grads):
            raise ValueError("loss does not depend on any variable in var_list; no gradients to apply.")
        pairs = [(g, v) for g, v in zip(grads, var_list, strict=True) if g is not None]
        return self.apply_gradients(pairs)

    def apply_gradients(self, grads_and_vars: Iterable):
        """All-reduces the gradients across replicas ("mean" or "sum") and applies them once."""
        pairs = list(grads_and_vars)
        context = tf.distribute.get_replica_context()
        replicas = context.num_replicas_in_sync if context is not None else 1
        if self.reduction == "mean" and replicas > 1:
            pairs = [(_scale(g, 1.0 / replicas), v) for g, v in pairs]
        call = current_call()
        if call is not None:
            call.optimizers.append(self)
        self.optimizer.apply_gradients(pairs)
        return self.optimizer.iterations
