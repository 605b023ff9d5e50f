"""Outside TRAIN, model_fn's writes to saved variables do nothing, as a TF1 session never ran them.

tf.estimator's evaluate/predict fetched only the loss, metric updates and predictions: a train_op
written by hand (`tf.compat.v1.assign_sub(w, lr * g)`, `global_step.assign_add(1)`) was built in
every mode but ran only in TRAIN. In a tf.function every stateful op runs, so without this each
eval step would update the weights the next batches see. Inside a model_fn call in EVAL or PREDICT,
assign/assign_add/assign_sub on model weights, optimizer state and the global step return the value
the write would have produced and leave the variable unchanged; metric (local) variables stay
writable, except in a read-only call (the engine's read of v1 metric values), where no write takes
effect. In every mode, model_fn's writes to the global step take no effect: the engine advances it.
Optimizers are guarded one level up (optimizer_guard.py). The wrappers are installed only while an
engine call runs (compat/scoped_patches.py) and outside model_fn calls call the original and nothing
else (another thread's own writes during train() included).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from tensorflow.python.distribute import tpu_values
from tensorflow.python.distribute import values as distribute_values
from tensorflow.python.ops import gen_resource_variable_ops, resource_variable_ops

from estimators.compat import scoped_patches
from estimators.compat.call_context import call_in_graph, current_call
from estimators.path_choice import GraphPathNeeded

SAVED = "_estimators_saved"  # attribute set on the store's model, optimizer and step variables
STEP = "_estimators_global_step"  # ... and on the engine's global step, which only the engine advances
KERAS = "_estimators_keras"  # ... and on a Keras 3 layer's variables
_METHODS = {"assign": lambda old, value: value, "assign_add": lambda old, delta: old + delta,
            "assign_sub": lambda old, delta: old - delta}
# The raw write ops (scatter updates of tf.compat.v1.metrics, writes to per-replica copies): off in read-only calls.
_RAW_WRITES = ("assign_variable_op", "assign_add_variable_op", "assign_sub_variable_op", "resource_scatter_add",
               "resource_scatter_sub", "resource_scatter_mul", "resource_scatter_div", "resource_scatter_min",
               "resource_scatter_max", "resource_scatter_update")
_MARK = "_estimators_guarded"
_classes: list[type] = []  # _variable_classes(), found once


def mark_saved(variable: Any, global_step: bool = False, keras: bool = False) -> None:
    """Marks a store variable (and its per-replica copies) as one that only TRAIN may write.

    global_step: model_fn's writes to it take no effect in any mode. A TF1 train_op's `minimize(loss,
    global_step=gs)` or `gs.assign_add(1)` would otherwise be seen by every read after it in the step
    (a tf.function orders them; a TF1 session did not), and the engine advances the step itself.
    """
    for each in (variable, *(getattr(variable, "values", None) or ())):
        try:
            setattr(each, SAVED, True)
            if keras:
                setattr(each, KERAS, True)
            if global_step:
                setattr(each, STEP, True)
        except AttributeError:  # a variable type without a __dict__: left writable
            pass


def _suppressed(call: Any, variable: Any) -> bool:
    """Whether model_fn's write to `variable` in this call takes no effect."""
    if call is None:
        return False
    if call.read_only or getattr(variable, STEP, False):
        return True
    return not call.training and getattr(variable, SAVED, False)


def _check_tf2_can_run(call: Any, variable: Any) -> None:
    """GraphPathNeeded for a write to a saved variable outside TRAIN (in a replica's call, or its merge_call).

    A session ran such a write only when what evaluate/predict fetched depended on it (an EMA read by a
    metric: yes; a train_op built in every mode: no); a tf.function runs every write. Sessions decide.
    """
    if (call is not None and not call.training and not call.read_only and getattr(variable, SAVED, False)
            and not getattr(variable, STEP, False) and not getattr(variable, KERAS, False)):
        raise GraphPathNeeded(f"model_fn writes variable {getattr(variable, 'name', '?')} in {call.mode}, which "
                              "tf.estimator's session did only when the fetched results needed it")


def _guarded(original: Callable, would_be: Callable) -> Callable:
    @functools.wraps(original)
    def write(self, value, use_locking=None, name=None, read_value=True):
        call = current_call()
        in_graph = call or call_in_graph()
        if in_graph is None:  # not in a model_fn call the engine runs: TensorFlow's own write
            return original(self, value, use_locking=use_locking, name=name, read_value=read_value)
        _check_tf2_can_run(in_graph, self)
        if not _suppressed(call, self):
            return original(self, value, use_locking=use_locking, name=name, read_value=read_value)
        if not read_value:
            return tf.no_op()
        return would_be(self.read_value(), tf.cast(value, self.dtype))

    setattr(write, _MARK, True)
    return write


def _raw_guarded(original: Callable) -> Callable:
    @functools.wraps(original)
    def write(*args, **kwargs):
        call = current_call()
        if call is not None and call.read_only:
            return tf.no_op()
        return original(*args, **kwargs)

    setattr(write, _MARK, True)
    return write


def _variable_classes() -> list[type]:
    """Every variable class of TensorFlow's that defines its own writes (plain, distributed, TPU)."""
    found = []
    for module in (resource_variable_ops, distribute_values, tpu_values):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, tf.Variable) and set(_METHODS) & set(vars(value)):
                found.append(value)
    return found


def install() -> None:
    """Wraps the variable classes' writes and the raw write ops for the engine call (scoped_patches.engine_call,
    which calls this under its lock; idempotent: wrapped functions are marked)."""
    if not _classes:
        _classes.extend(_variable_classes())
    for cls in _classes:
        for method, would_be in _METHODS.items():
            original = cls.__dict__.get(method)
            if original is not None and not getattr(original, _MARK, False):
                scoped_patches.replace(cls, method, _guarded(original, would_be))
    for name in _RAW_WRITES:
        original = vars(gen_resource_variable_ops)[name]
        if not getattr(original, _MARK, False):
            scoped_patches.replace(gen_resource_variable_ops, name, _raw_guarded(original))
