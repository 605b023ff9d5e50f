"""CrossShardOptimizer: one update from the gradients of every replica, as tf.compat.v1.tpu's did.

TF1's contract, kept: `compute_gradients` differentiates the loss scaled by 1/N ("mean", the
default) and `apply_gradients` sums the replicas' gradients and applies them once. The wrapped
optimizer may be a tf.compat.v1.train optimizer, a Keras 3 optimizer or a tf_keras one; all of
them sum gradients across replicas when applied in replica context, so N replicas on a global
batch B take the same step as one replica on B. Methods take TF1's signatures
(`minimize(loss, global_step=None, var_list=None)`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import keras
import tensorflow as tf

from estimators import log as logging
from estimators import path_choice
from estimators.compat.call_context import current_call
from estimators.compat.optimizer_guard import learning_rate_of

_MEAN = ("mean", "weighted_mean", "sum_over_batch_size", "weighted_sum_over_batch_size")
_SUM = ("sum", "weighted_sum")


def _kind(optimizer: Any) -> str | None:
    if isinstance(optimizer, keras.optimizers.Optimizer):
        return "keras"
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        return "v1"
    module = type(optimizer).__module__ or ""
    if module.startswith("tf_keras.") and hasattr(optimizer, "apply_gradients"):
        return "tf_keras"
    return None


def _as_tf_variable(var: Any) -> Any:
    return var.value if isinstance(var, keras.Variable) else var


def _replicas() -> int:
    context = tf.distribute.get_replica_context()
    return context.num_replicas_in_sync if context is not None else 1


class CrossShardOptimizer:
    """Wraps an optimizer so the replicas' gradients are reduced across replicas and applied once."""

    def __init__(self, opt: Any, reduction: str = "mean", name: str = "CrossShardOptimizer",
                 group_assignment: Any = None):
        kind = _kind(opt)
        if kind is None:
            raise ValueError(
                "CrossShardOptimizer wraps a tf.compat.v1.train optimizer or a Keras optimizer "
                f"(keras.optimizers.*), got {type(opt).__name__}."
            )
        reduction = str(reduction).lower()
        if reduction not in _MEAN + _SUM:
            raise ValueError(f"reduction must be 'mean' or 'sum' (or a tf.compat.v1.losses.Reduction), got "
                             f"{reduction!r}.")
        if group_assignment is not None:
            raise ValueError("group_assignment (sub-groups of TPU cores) is not supported; reduce over all replicas.")
        self._opt = opt
        self._kind = kind
        self._mean = reduction in _MEAN
        self.name = name

    @property
    def optimizer(self) -> Any:
        """The wrapped optimizer."""
        return self._opt

    @property
    def learning_rate(self) -> Any:
        return learning_rate_of(self._opt)

    def __getattr__(self, name: str) -> Any:  # get_slot, variables, iterations, ... of the wrapped optimizer
        if name.startswith("__") or name in ("_opt", "_kind", "_mean"):
            raise AttributeError(name)
        return getattr(self._opt, name)

    def compute_gradients(self, loss: Any, var_list: Iterable | None = None, gate_gradients: int = 1,
                          aggregation_method: Any = None, colocate_gradients_with_ops: bool = False,
                          grad_loss: Any = None) -> list[tuple[Any, Any]]:
        """(gradient, variable) pairs of this replica's loss, scaled by 1/replicas for "mean".

        The gradients are those of a GradientTape (Keras's train step); `gate_gradients` is accepted
        and not used (compat/gradient_gating.py says why it would change bfloat16 results).
        """
        del colocate_gradients_with_ops, gate_gradients  # placement is tf.distribute's; gating: see docstring
        if self._kind != "v1" and path_choice.graph_call_reason():
            raise path_choice.tf2_only(f"CrossShardOptimizer over a Keras optimizer ({type(self._opt).__name__})")
        variables = self._variables(var_list)
        replicas = _replicas()
        if self._mean and replicas > 1:
            loss = loss * tf.cast(1.0 / replicas, loss.dtype)
        grads = tf.gradients(loss, [_as_tf_variable(v) for v in variables], grad_ys=grad_loss,
                             gate_gradients=False, aggregation_method=aggregation_method)
        return list(zip(grads, variables, strict=True))

    def apply_gradients(self, grads_and_vars: Iterable, global_step: Any = None, name: str | None = None) -> Any:
        """Sums the gradients across replicas and applies them once (only in TRAIN)."""
        del name
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("No gradients to apply: the loss does not depend on any variable in var_list.")
        call = current_call()
        if call is not None:
            rate = learning_rate_of(self._opt) if call.training else None
            call.applied(self._opt, cross_shard=True, kind=self._kind, learning_rate=rate)
        if self._kind == "v1":
            return self._opt.apply_gradients(pairs, global_step=global_step)
        return self._opt.apply_gradients(pairs)

    def minimize(self, loss: Any, global_step: Any = None, var_list: Iterable | None = None, gate_gradients: int = 1,
                 aggregation_method: Any = None, colocate_gradients_with_ops: bool = False, name: str | None = None,
                 grad_loss: Any = None) -> Any:
        """compute_gradients then apply_gradients, with tf.compat.v1.train.Optimizer.minimize's signature."""
        if isinstance(global_step, (list, tuple)) and var_list is None:
            logging.log_first_n(
                logging.WARNING, "CrossShardOptimizer.minimize(loss, var_list) positionally is deprecated: the "
                "second argument is global_step, as in TF1; pass var_list=...", 1)
            global_step, var_list = None, global_step
        pairs = self.compute_gradients(loss, var_list, gate_gradients, aggregation_method,
                                       colocate_gradients_with_ops, grad_loss)
        if all(g is None for g, _ in pairs):
            raise ValueError("loss does not depend on any variable in var_list; no gradients to apply.")
        return self.apply_gradients(pairs, global_step=global_step, name=name)

    @staticmethod
    def _variables(var_list: Iterable | None) -> list:
        if var_list is None:
            if current_call() is None and not path_choice.graph_call_reason():
                raise ValueError("minimize() without var_list works only inside a model_fn run by an Estimator.")
            keys = tf.compat.v1.GraphKeys
            var_list = tf.compat.v1.trainable_variables() + tf.compat.v1.get_collection(
                keys.TRAINABLE_RESOURCE_VARIABLES)
        variables = list(var_list)
        if not variables:
            raise ValueError("minimize() found no trainable variables; build the model before minimizing.")
        return variables
