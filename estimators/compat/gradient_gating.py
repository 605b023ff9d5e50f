"""TF1's gate_gradients=GATE_OP, dropped inside model_fn: it ordered a session's ops; here it costs bfloat16 precision.

tf.compat.v1 optimizers differentiate with `tf.gradients(..., gate_gradients=True)` by default,
which routes every op's input gradients through a tuple of identities. Op by op the values are
the same, but on the CPU the gating keeps TensorFlow's oneDNN rewrite from computing a
convolution's bias gradient together with its filter gradient, so the plain BiasAddGrad kernel
runs instead, and in bfloat16 it accumulates in bfloat16: 20-90 % off for a 28x28 conv layer,
where Keras's train step (a GradientTape) and XLA sum in float32. That cost the built-in cnn 4
points of accuracy in bfloat16 (BUILD_NOTES "bfloat16 accuracy at full training"). Inside a
model_fn call, a v1 optimizer's GATE_OP therefore becomes GATE_NONE; GATE_GRAPH (an explicit
request) is kept, since it does not stop the rewrite. In a tf.function, automatic control
dependencies already order the variable reads of the gradients before the updates, which is
what gating protected in a TF1 session. CrossShardOptimizer never gates (tpu/cross_shard_optimizer.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import tensorflow as tf

from estimators.compat.call_context import current_call

_GATE_ARG = 1  # compute_gradients(loss, var_list=None, gate_gradients=GATE_OP, ...): position after loss


def ungated(original: Callable) -> Callable:
    """tf.compat.v1.train.Optimizer.compute_gradients with GATE_OP as GATE_NONE inside model_fn calls
    (installed by compat/optimizer_guard.py with the optimizers' other wrappers)."""
    gate_op, gate_none = tf.compat.v1.train.Optimizer.GATE_OP, tf.compat.v1.train.Optimizer.GATE_NONE

    @functools.wraps(original)
    def compute_gradients(self, loss, *args, **kwargs):
        if current_call() is not None:
            if len(args) > _GATE_ARG:
                if args[_GATE_ARG] == gate_op:
                    args = (*args[:_GATE_ARG], gate_none, *args[_GATE_ARG + 1:])
            elif kwargs.get("gate_gradients", gate_op) == gate_op:
                kwargs["gate_gradients"] = gate_none
        return original(self, loss, *args, **kwargs)

    return compute_gradients
