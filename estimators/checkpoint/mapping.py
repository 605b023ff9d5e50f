"""Which checkpoint value feeds each variable: its own TF1 name, or the name an older writer used.

Model weights and TF1 optimizers' slots keep their names across tf.estimator and this engine, so a
tf.estimator model_dir resumes by name. Two kinds of state were named differently before:
- a Keras 3 optimizer's step counter (`adam/iteration`) did not exist in TF1, which counted steps in
  `global_step` (a TF1 Adam's bias correction used the same count): it starts from `global_step`;
- Keras 2 (tf.keras 2.x) optimizers named slots `Adam/<variable>/m` and `Adam/<variable>/v` and their
  counter `Adam/iter`: a Keras 3 optimizer of the same algorithm takes them as its TF1-named slots.
A Keras 3 seed generator's state (TF1 had none) is optional. Anything else a checkpoint lacks is an error
(Checkpointer.restore lists it), never a silent init.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

GLOBAL_STEP = "global_step"
# TF1 slot suffix (what naming.tf1_slot_name gives a Keras 3 slot) -> Keras 2 OptimizerV2 slot name.
_KERAS2_SLOTS = {"Adam": "m", "Adam_1": "v", "Adam_2": "vhat", "Momentum": "momentum", "RMSProp": "rms",
                 "RMSProp_1": "mg", "Adagrad": "accumulator", "Ftrl": "accumulator", "Ftrl_1": "linear"}
_KERAS2_OPTIMIZER = {"Adam": "Adam", "Momentum": "SGD", "RMSProp": "RMSprop", "Adagrad": "Adagrad", "Ftrl": "Ftrl"}
_COUNTER = re.compile(r"^(?P<optimizer>[^/]+)/iteration$")


def _alternatives(name: str, stored: Collection[str]) -> list[str]:
    """Names older writers used for the variable `name`, most specific first."""
    counter = _COUNTER.match(name)
    if counter:
        keras2 = [key for key in stored if key.endswith("/iter") and key.count("/") == 1]
        return keras2[:1] + [GLOBAL_STEP]
    variable, _, slot = name.rpartition("/")
    base = slot.split("_")[0]
    if variable and slot in _KERAS2_SLOTS:
        optimizer = _KERAS2_OPTIMIZER[base]
        return [f"{optimizer}/{variable}/{_KERAS2_SLOTS[slot]}"]
    return []


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
        source = name if name in stored else next((alt for alt in _alternatives(name, stored) if alt in stored), None)
        if source is None:
            if name in optional or keras3_only(name):
                continue
            source = name
        plan[source] = (*_as_tuple(plan[source]), variable) if source in plan else variable
    return plan


def keras3_only(name: str) -> bool:
    """State Keras 3 keeps and TF1 had no variable for (a Dropout's seed generator): saved, but optional to restore.

    tf.estimator's model_dirs lack it; the layer then starts its random stream as initialised.
    """
    return name.rpartition("/")[2] == "seed_generator_state"


def _as_tuple(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)
