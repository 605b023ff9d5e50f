"""Optimizers inside model_fn update only in TRAIN, as a TF1 session only ran train_op there.

Many TF1 model_fns call `optimizer.minimize(loss)` in every mode and let tf.estimator ignore the
train_op outside TRAIN. In a tf.function every stateful op runs, so without this an evaluation
or prediction would train the model. The engine wraps the apply methods of TF1, Keras 3 and
tf_keras optimizers while an engine call runs (compat/scoped_patches.py puts the originals back
when it ends): inside a model_fn call in EVAL or PREDICT they do nothing (and create no slots); in
TRAIN they run as usual, with the variables they create marked as optimizer state. Outside model_fn
calls (another thread's own optimizer during train()) the wrappers call the original and nothing
else. The variables an optimizer makes outside its update (Keras 3's and tf_keras's `iterations`,
learning rate, hyperparameters) are told from model weights where they are created, by the variable
store (tf2/naming.py: Keras 3's scope stack, tf_keras's own methods on the stack), not here.
A v1 optimizer's compute_gradients is wrapped here too, for compat/gradient_gating.py (no per-op
gating inside model_fn).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from estimators.compat import gradient_gating, scoped_patches
from estimators.compat.call_context import (
    OptimizerState,
    current_call,
    optimizer_state,
)

_MARK = "_estimators_guarded"


def _tf_keras_legacy(optimizer: Any) -> bool:
    module = sys.modules.get("tf_keras.src.optimizers.legacy.optimizer_v2")
    base = getattr(module, "OptimizerV2", None)
    return base is not None and isinstance(optimizer, base)


def learning_rate_of(optimizer: Any) -> tf.Tensor:
    """The learning rate an optimizer applies now (Keras: its schedule at its current step)."""
    if _tf_keras_legacy(optimizer):
        # Its hyperparameter variables are made once, in its own name scope (`SGD/learning_rate`),
        # as its apply_gradients would make them; the rate is then its schedule and decay now.
        if not getattr(optimizer, "_hypers_created", True):
            graph = tf.compat.v1.get_default_graph()
            scope = graph.get_name_scope()
            with graph.name_scope(f"{scope}/{optimizer._name}/" if scope else f"{optimizer._name}/"), \
                    tf.init_scope(), optimizer_state(OptimizerState(optimizer)):
                optimizer._create_hypers()  # noqa: SLF001
        return tf.cast(optimizer._decayed_lr(tf.float32), tf.float32)  # noqa: SLF001
    rate = getattr(optimizer, "learning_rate", None)
    if rate is None:
        rate = getattr(optimizer, "_learning_rate", 0.0)  # tf.compat.v1.train optimizers
    if callable(rate) and not isinstance(rate, (tf.Variable, keras.Variable)):
        rate = rate()
    return tf.cast(tf.convert_to_tensor(rate), tf.float32)


def tf_keras_rate_used(optimizer: Any) -> tf.Tensor:
    """The learning rate a tf_keras optimizer's apply_gradients just used (read after it ran).

    Legacy OptimizerV2: its schedule and `decay` at the step before `iterations` was incremented;
    tf_keras's newer optimizer keeps the rate it used in its learning_rate variable.
    """
    step = tf.cast(optimizer.iterations, tf.float32) - 1.0
    get_hyper = getattr(optimizer, "_get_hyper", None)
    rate = get_hyper("learning_rate") if get_hyper is not None else optimizer.learning_rate
    if callable(rate) and not isinstance(rate, tf.Variable):
        rate = rate(step)
    rate = tf.cast(tf.convert_to_tensor(rate), tf.float32)
    decay = getattr(optimizer, "_initial_decay", 0.0)
    if isinstance(decay, (int, float)) and decay > 0:
        rate = rate / (1.0 + decay * step)
    return rate


def _guard_apply(original: Callable, kind: str, skipped: Callable[[Any], Any]) -> Callable:
    @functools.wraps(original)
    def apply(self, *args, **kwargs):
        call = current_call()
        if call is None:
            return original(self, *args, **kwargs)
        if not call.training:
            call.applied(self, cross_shard=False, kind=kind)
            return skipped(self)
        if kind == "tf_keras":
            # A Keras 2 optimizer creates its hyperparameter variables (`Adam/beta_1`, ...) in
            # apply_gradients' own name scope: its rate is read after that, as the rate it used.
            with optimizer_state(OptimizerState(self)):
                result = original(self, *args, **kwargs)
            call.applied(self, cross_shard=False, kind=kind, learning_rate=tf_keras_rate_used(self))
            return result
        call.applied(self, cross_shard=False, kind=kind, learning_rate=learning_rate_of(self))
        if kind == "v1":
            args, kwargs = _without_global_step(args, kwargs)
        with optimizer_state(OptimizerState(self)):
            return original(self, *args, **kwargs)

    return apply


def _without_global_step(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A v1 apply_gradients(grads_and_vars, global_step=None, name=None) call without its global_step.

    The engine advances the global step after the step; the v1 optimizer's own increment (a raw
    assign_add on the variable's handle) would be seen by every later read in the step, which a
    TF1 session never ordered after it (a host_call's `gs` would start at 1, not 0).
    """
    if len(args) >= 2:
        args = (args[0], None, *args[2:])
    if "global_step" in kwargs:
        kwargs = dict(kwargs, global_step=None)
    return args, kwargs


def _wrap(cls: type, method: str, wrapper: Callable[[Callable], Callable]) -> None:
    """cls.method wrapped until the engine call ends (once: an installed wrapper is marked)."""
    original = cls.__dict__.get(method)
    if original is not None and not getattr(original, _MARK, False):
        wrapped = wrapper(original)
        setattr(wrapped, _MARK, True)
        scoped_patches.replace(cls, method, wrapped)


def _v1_optimizer() -> type:
    return tf.compat.v1.train.Optimizer


def _install_keras() -> None:
    base = keras.optimizers.Optimizer.__mro__
    base_optimizer = next(c for c in base if c.__name__ == "BaseOptimizer")
    _wrap(base_optimizer, "apply_gradients", lambda f: _guard_apply(f, "keras", lambda opt: opt.iterations))
    _wrap(base_optimizer, "apply", lambda f: _guard_apply(f, "keras", lambda opt: None))


def _install_v1() -> None:
    _wrap(_v1_optimizer(), "apply_gradients", lambda f: _guard_apply(f, "v1", lambda opt: tf.no_op()))
    _wrap(_v1_optimizer(), "compute_gradients", gradient_gating.ungated)


def _install_tf_keras() -> None:
    """tf_keras (TF_USE_LEGACY_KERAS=1) optimizers, once that package has been imported."""
    legacy = sys.modules.get("tf_keras.src.optimizers.legacy.optimizer_v2")
    current = sys.modules.get("tf_keras.src.optimizers.optimizer")
    for module, cls_name in ((legacy, "OptimizerV2"), (current, "_BaseOptimizer")):
        cls = getattr(module, cls_name, None)
        if cls is not None:
            _wrap(cls, "apply_gradients", lambda f: _guard_apply(f, "tf_keras", lambda opt: tf.no_op()))


def install() -> None:
    """Wraps the optimizer classes present now, for the engine call (scoped_patches.engine_call, which
    calls this under its lock; idempotent: wrapped methods are marked)."""
    _install_keras()
    _install_v1()
    if "tf_keras.src.optimizers.optimizer" in sys.modules:
        _install_tf_keras()
