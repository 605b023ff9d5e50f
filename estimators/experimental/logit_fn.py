"""`call_logit_fn(logit_fn, features, mode, params, config)`: tf.estimator.experimental.call_logit_fn.

Calls a logit_fn (features -> logits, the network part of a model_fn) with `features` and those of
`mode`, `params`, `config` it declares by name, and checks that it returned a Tensor or a dict of
string -> Tensor (a multi-head network's logits), as 2.15 did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.compat.fn_args import declared_args

_LOGIT_FN_ARGS = ("features", "mode", "params", "config")


def call_logit_fn(logit_fn: Callable, features: Any, mode: str, params: Any, config: Any) -> Any:
    """logit_fn(features=features, [mode=], [params=], [config=]): the logits, a Tensor or {str: Tensor}."""
    declared = declared_args(logit_fn, _LOGIT_FN_ARGS, "logit_fn")
    offered = {"mode": mode, "params": params, "config": config}
    logits = logit_fn(features=features, **{name: offered[name] for name in declared if name in offered})
    if isinstance(logits, tf.Tensor):
        return logits
    if isinstance(logits, dict) and all(isinstance(k, str) and isinstance(v, tf.Tensor) for k, v in logits.items()):
        return logits
    raise ValueError(f"logit_fn should return a Tensor or a dictionary mapping strings to Tensors. logit_fn "
                     f"returned: {logits!r}")
