"""Outside TRAIN, model_fn's writes to saved variables do nothing, as a TF1 session never ran them.

tf.estimator's evaluate/predict fetched only the loss, metric updates and predictions: a train_op
written by hand (`tf.compat.v1.assign_sub(w, lr * g)`, `global_step.assign_add(1)`) was built in
every mode but ran only in TRAIN. In a tf.function every stateful op runs, so without this each
eval step would update the weights the next batches see. Inside a model_fn call in EVAL or PREDICT,
assign/assign_add/assign_sub on model weights, optimizer state and the global step return the value
the write would have produced and leave the variable unchanged; metric (local) variables stay
writable. In every mode, model_fn's writes to the global step take no effect: the engine advances it.

The guard is keyed on what the engine builds: the variable store guards each variable it creates
(and the engine its global step) with per-variable write methods, set on that variable object and
its per-replica copies, so no TensorFlow class changes. Outside model_fn calls they call TensorFlow's
own write and nothing else. The read-only call that reads v1 metric values is not guarded here: it is
pruned to the values it fetches (tf2/state.py), as a session ran only what its fetches needed.
Optimizers are guarded one level up (optimizer_guard.py).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators.compat.call_context import call_in_graph, current_call
from estimators.path_choice import GraphPathNeeded

_WOULD_BE = {"assign": lambda old, value: value, "assign_add": lambda old, delta: old + delta,
             "assign_sub": lambda old, delta: old - delta}


class _Guard:
    """What the writes to one variable (and its per-replica copies) may do inside model_fn calls."""

    __slots__ = ("saved", "global_step", "keras")

    def __init__(self, saved: bool, global_step: bool, keras: bool) -> None:
        self.saved = saved  # model weights and optimizer state: only TRAIN writes them
        self.global_step = global_step  # the engine advances it; model_fn's writes never take effect
        self.keras = keras  # a Keras 3 layer's own state: its writes in EVAL stay on the TF2 path

    def suppressed(self, call: Any) -> bool:
        """Whether model_fn's write in this call takes no effect."""
        if call is None:
            return False
        return self.global_step or (not call.training and self.saved)

    def check_tf2_can_run(self, call: Any, name: str) -> None:
        """GraphPathNeeded for a write to a saved variable outside TRAIN (in a replica's call, or its merge_call).

        A session ran such a write only when what evaluate/predict fetched depended on it (an EMA read by a
        metric: yes; a train_op built in every mode: no); a tf.function runs every write. Sessions decide.
        """
        if (not call.training and not call.read_only and self.saved and not self.global_step
                and not self.keras):
            raise GraphPathNeeded(f"model_fn writes variable {name} in {call.mode}, which tf.estimator's "
                                  "session did only when the fetched results needed it")


def _guarded_write(variable: Any, method: str, guard: _Guard) -> Callable:
    original = getattr(type(variable), method)  # TensorFlow's own write, for this variable's class
    would_be = _WOULD_BE[method]

    def write(self, value, use_locking=None, name=None, read_value=True):
        call = current_call()
        in_graph = call or call_in_graph()
        if in_graph is None:  # not in a model_fn call the engine runs: TensorFlow's own write
            return original(self, value, use_locking=use_locking, name=name, read_value=read_value)
        guard.check_tf2_can_run(in_graph, getattr(self, "name", "?"))
        if not guard.suppressed(call):
            return original(self, value, use_locking=use_locking, name=name, read_value=read_value)
        if not read_value:
            return tf.no_op()
        return would_be(self.read_value(), tf.cast(value, self.dtype))

    return types.MethodType(write, variable)


def guard(variable: Any, saved: bool = True, global_step: bool = False, keras: bool = False) -> None:
    """Guards model_fn's writes to a variable the engine created (and to its per-replica copies).

    saved: only TRAIN's model_fn calls may write it (model weights, optimizer state), else a metric's.
    global_step: model_fn's writes to it take no effect in any mode. A TF1 train_op's `minimize(loss,
    global_step=gs)` or `gs.assign_add(1)` would otherwise be seen by every read after it in the step
    (a tf.function orders them; a TF1 session did not), and the engine advances the step itself.
    keras: a Keras 3 layer's variable (BatchNormalization called with training=True in EVAL writes it).
    """
    if not (saved or global_step):
        return  # a metric's state: model_fn's writes take effect in every mode
    rule = _Guard(saved, global_step, keras)
    for each in (variable, *(getattr(variable, "values", None) or ())):
        for method in _WOULD_BE:
            try:
                setattr(each, method, _guarded_write(each, method, rule))
            except AttributeError:  # a variable type without a __dict__: left writable
                pass
