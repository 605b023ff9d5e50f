"""Which precision model_fn computes in, and Keras's dtype policy set to it around every model_fn call.

`bfloat16` is Keras's `mixed_bfloat16` policy: Keras 3 layers keep float32 variables (so
checkpoints are the same in either precision) and compute in bfloat16, as on a TPU's matrix
units. Keras 3 keeps the policy per thread, and MirroredStrategy calls model_fn in one thread
per replica, so a policy the caller sets globally would reach one replica and not eight: the
engine sets the policy itself around each call, from RunConfig(precision=...) (main.py's
--precision) or params["precision"] (the TPU reference models' convention), and restores it afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import keras
import tensorflow as tf

from estimators.mode_keys import ModeKeys

try:  # Keras 3 keeps the global dtype policy in thread-local state.
    from keras.src.backend.common import global_state as _keras_state
except ImportError:  # pragma: no cover - a Keras 3 release that moved it
    _keras_state = None

FLOAT32 = "float32"
BFLOAT16 = "bfloat16"
PRECISIONS = (FLOAT32, BFLOAT16)
KERAS_POLICIES = {FLOAT32: "float32", BFLOAT16: "mixed_bfloat16"}
_POLICY_KEY = "dtype_policy"


def checked(value: Any, where: str) -> str | None:
    """`value` if it is a precision the engine knows (None: not set), else one ValueError naming the choices."""
    if value is None:
        return None
    if value not in PRECISIONS:
        hint = " (float16 needs loss scaling, which model_fns do not do; use bfloat16)" if value in (
            "float16", "mixed_float16") else ""
        raise ValueError(f"{where}={value!r} is not a precision the engine knows; use one of {list(PRECISIONS)}{hint}.")
    return value


def resolve(config: Any, params: Any) -> str:
    """The precision of a model_fn call: RunConfig(precision=) or params["precision"], whichever is set
    (float32 when neither is).

    RunConfig's default is None (not set), so an explicit float32 there can be told from the
    default: when both are set and differ, that is an error rather than a silent choice.
    """
    from_config = checked(getattr(config, "precision", None), "RunConfig(precision)")
    from_params = checked(params.get("precision") if isinstance(params, Mapping) else None, "params['precision']")
    if from_config is not None and from_params is not None and from_config != from_params:
        raise ValueError(
            f"RunConfig(precision={from_config!r}) and params['precision']={from_params!r} disagree; set the "
            "precision in one place."
        )
    return from_config or from_params or FLOAT32


def _thread_policy() -> Any:
    """This thread's own Keras global policy object, or None when it never set one (float32)."""
    if _keras_state is None:
        return None
    return _keras_state.get_global_attribute(_POLICY_KEY)


@contextlib.contextmanager
def policy_scope(precision: str) -> Iterator[None]:
    """Keras's global dtype policy set to `precision` for the block (this thread), then restored.

    A policy this thread already set that differs from `precision` is an error: with several
    replicas it would not reach their threads, so results would depend on the replica count.
    """
    wanted = KERAS_POLICIES[precision]
    outer = _thread_policy()
    if outer is not None and outer.name != wanted and outer.name != FLOAT32:
        raise ValueError(
            f"Keras's global dtype policy is {outer.name!r} but the estimator's precision is {precision!r}. "
            "The engine sets the policy for every model_fn call from its own setting, the same in every "
            "replica thread (Keras 3 keeps the global policy per thread, so replicas would not see yours): "
            f"pass RunConfig(precision=...) or params['precision'] ({' or '.join(map(repr, PRECISIONS))}) and "
            "leave the global policy at float32."
        )
    keras.config.set_dtype_policy(wanted)
    try:
        yield
    finally:
        if _keras_state is not None:
            _keras_state.set_global_attribute(_POLICY_KEY, outer)
        else:  # pragma: no cover
            keras.config.set_dtype_policy(outer.name if outer is not None else FLOAT32)


def check_loss(spec: Any, mode: str, precision: str) -> None:
    """ValueError when a bfloat16 model_fn trains on a loss that is not float32 (gradients would be bfloat16)."""
    if precision != BFLOAT16 or mode != ModeKeys.TRAIN:
        return
    loss = getattr(spec, "loss", None)
    dtype = getattr(loss, "dtype", None)
    if dtype is not None and tf.as_dtype(dtype) != tf.float32:
        raise ValueError(
            f"model_fn's TRAIN loss is {tf.as_dtype(dtype).name}; under precision='bfloat16' compute it in float32 "
            "(cast the logits first: tf.cast(logits, tf.float32)), as Keras does, so the loss and its gradients "
            "keep float32's precision."
        )
