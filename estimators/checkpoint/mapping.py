"""Which checkpoint value feeds each variable: its own TF1 name, or the name an older writer used.

Model weights and TF1 optimizers' slots keep their names across tf.estimator and this engine, so a
tf.estimator model_dir resumes by name. Two kinds of state were named differently before:
- a Keras 3 optimizer's step counter (`adam/iteration`) did not exist in TF1, which counted steps in
  `global_step` (a TF1 Adam's bias correction used the same count): it starts from `global_step`;
- Keras 2 (tf.keras 2.x) optimizers named slots `Adam/<variable>/m` and `Adam/<variable>/v` and their
  counter `Adam/iter`: a Keras 3 optimizer of the same algorithm takes them as its TF1-named slots
  (2.15's model_to_estimator graph scoped them `training/Adam/<variable>/m`: object-based full names).
A Keras 3 seed generator's state (TF1 had none) is optional. Anything else a checkpoint lacks is an error
(Checkpointer.restore lists it), never a silent init.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

GLOBAL_STEP = "global_step"
# TF1 slot suffix (what naming.tf1_slot_name gives a Keras 3 slot) -> Keras 2 OptimizerV2 slot names, the first
# stored one taken: RMSprop numbers its slots rms, mg (centered only), momentum (momentum > 0 only), as TF1 did.
_KERAS2_SLOTS = {"Adam": ("m",), "Adam_1": ("v",), "Adam_2": ("vhat",), "Momentum": ("momentum",),
                 "RMSProp": ("rms",), "RMSProp_1": ("mg", "momentum"), "RMSProp_2": ("momentum",),
                 "Adagrad": ("accumulator",), "Ftrl": ("accumulator",), "Ftrl_1": ("linear",),
                 "Adadelta": ("accum_grad",), "Adadelta_1": ("accum_var",)}
_KERAS2_OPTIMIZER = {"Adam": "Adam", "Momentum": "SGD", "RMSProp": "RMSprop", "Adagrad": "Adagrad", "Ftrl": "Ftrl",
                     "Adadelta": "Adadelta"}
_COUNTER = re.compile(r"^(?:(?P<optimizer>[^/]+)/)?iteration$")  # tf_keras's newer optimizers: bare `iteration`
# tf_keras's newer optimizers (TF_USE_LEGACY_KERAS=1) name slots `<Optimizer>/<slot>/<variable>`; 2.15's
# model_to_estimator (legacy Keras 2 optimizers) `training/<Optimizer>/<variable>/<its slot>`.
_TF_KERAS_SLOT = re.compile(r"^(?P<optimizer>SGD|Adam|RMSprop|Adagrad|Ftrl|Adadelta)/(?P<slot>[a-z_]+)/(?P<var>.+)$")
_LEGACY_SLOTS = {"m": "m", "v": "v", "vhat": "vhat", "velocity": "rms", "momentum": "momentum",
                 "average_gradient": "mg", "accumulator": "accumulator", "linear": "linear",
                 "accumulated_grad": "accum_grad", "accumulated_delta_var": "accum_var"}


def _alternatives(name: str, stored: Collection[str], names: Collection[str] = ()) -> list[str]:
    """Names older writers used for the variable `name` (of the model's `names`), most specific first."""
    counter = _COUNTER.match(name)
    if counter:
        keras2 = [key for key in stored if key.endswith("/iter") and key.count("/") == 1]
        return keras2[:1] + [GLOBAL_STEP]
    tf_keras = _TF_KERAS_SLOT.match(name)
    if tf_keras and tf_keras["slot"] in _LEGACY_SLOTS:
        slot = "momentum" if tf_keras["optimizer"] == "SGD" else _LEGACY_SLOTS[tf_keras["slot"]]
        return [f"training/{tf_keras['optimizer']}/{tf_keras['var']}/{slot}"]
    variable, _, slot = name.rpartition("/")
    base = slot.split("_")[0]
    if variable and slot in _KERAS2_SLOTS:
        optimizer = _KERAS2_OPTIMIZER[base]
        candidates = [f"{optimizer}/{variable}/{keras2}" for keras2 in _rmsprop_second(variable, slot, stored, names)]
        # each also as 2.15 model_to_estimator's object graph full name
        return [alternative for candidate in candidates for alternative in (candidate, f"training/{candidate}")]
    return []


def _rmsprop_second(variable: str, slot: str, stored: Collection[str], names: Collection[str]) -> tuple[str, ...]:
    """The Keras 2 slots `slot` may be; RMSprop's second (RMSProp_1) by the model's slots and the checkpoint's.

    With a third slot the model is centered with momentum (rms, mg, momentum); with two it is centered
    (mg) or has momentum (momentum), which names alone cannot tell when the checkpoint has both: then none,
    so restore() reports the slot missing rather than filling it from the wrong one.
    """
    if slot != "RMSProp_1":
        return _KERAS2_SLOTS[slot]
    if f"{variable}/RMSProp_2" in names:
        return ("mg",)
    held = [keras2 for keras2 in _KERAS2_SLOTS[slot]
            if f"RMSprop/{variable}/{keras2}" in stored or f"training/RMSprop/{variable}/{keras2}" in stored]
    return tuple(held) if len(held) == 1 else ()


def restore_plan(variables: Mapping[str, Any], stored: Collection[str],
                 optional: Collection[str] = ()) -> dict[str, Any]:
    """{checkpoint name: variable or tuple of variables} for Checkpointer.restore.

    A variable absent under its own name takes an older writer's name when the checkpoint has it;
    absent under every name, it is left out when `optional`, else kept under its own name so that
    restore() reports it.
    """
    stored = set(stored)
    plan: dict[str, Any] = {}
    for name, variable in variables.items():
        source = name if name in stored else next(
            (alt for alt in _alternatives(name, stored, variables) if alt in stored), None)
        if source is None:
            if name in optional or keras3_only(name) or _momentum_less(name, stored):
                continue
            source = name
        plan[source] = (*_as_tuple(plan[source]), variable) if source in plan else variable
    return plan


def keras3_only(name: str) -> bool:
    """State Keras 3 keeps and TF1 had no variable for (a Dropout's seed generator): saved, but optional to restore.

    tf.estimator's model_dirs lack it; the layer then starts its random stream as initialised.
    """
    return name.rpartition("/")[2] == "seed_generator_state"


def _momentum_less(name: str, stored: Collection[str]) -> bool:
    """A tf_keras SGD's momentum slot (made even at momentum 0) where the checkpoint has none: 2.15's legacy SGD
    made them only for a momentum; they start at zero."""
    def sgd_slot(key: str) -> bool:
        return key.startswith("SGD/m/") or (key.startswith("training/SGD/") and key.endswith("/momentum")
                                            and key.count("/") > 2)  # not the hyperparameter training/SGD/momentum

    return name.startswith("SGD/m/") and not any(sgd_slot(key) for key in stored)


def _as_tuple(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)
