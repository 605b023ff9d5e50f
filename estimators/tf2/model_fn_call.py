"""Calling a user's model_fn: the arguments it takes, and the TF1 world it runs in.

Every call gets fresh TF1 names (tf2/naming.py), its own graph collections with the engine's
global step (compat/collections.py), the train-op guard and ungated v1 gradients
(compat/optimizer_guard.py, compat/gradient_gating.py), Keras 2's
`get_updates_for` on Keras layers (compat/keras_updates.py) and Keras's
dtype policy for the run's precision (estimators/precision.py), and is the current call on its
thread while it runs, so the variable store and the optimizers can record what it created and applied.
The guards are installed while the call runs (entering it installs them, compat/scoped_patches.py),
and taken away when the outermost engine call ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators import precision
from estimators.compat import guards  # noqa: F401 - registers the engine's guards before any call
from estimators.compat.call_context import ModelFnCall, entered
from estimators.compat.collections import call_collections
from estimators.compat.fn_args import bound_model_fn
from estimators.tf2 import naming


def call_model_fn(model_fn: Callable, args: tuple[str, ...], call: ModelFnCall, features: Any,
                  labels: Any, params: dict, config: Any, global_step: Any) -> Any:
    """Calls model_fn with the arguments it takes, as `call`, in a fresh TF1 naming and collection scope,
    under the Keras dtype policy of the run's precision (restored afterwards)."""
    invoke = bound_model_fn(model_fn, args, features, labels, call.mode, params, config)
    computes_in = precision.resolve(config, params)
    with (entered(call), naming.call_names() as names, call_collections(global_step) as collections,
          precision.policy_scope(computes_in)):
        call.names, call.collections = names, collections
        spec = invoke()
        call.summaries = collections.get(tf.compat.v1.GraphKeys.SUMMARIES)
    precision.check_loss(spec, call.mode, computes_in)
    return spec
