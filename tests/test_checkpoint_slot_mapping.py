"""Which older checkpoint name fills an optimizer slot: RMSprop's second slot is chosen by the model's slots.

Keras 2 (and 2.15's object-based checkpoints) named RMSprop's slots rms, mg (centered only) and momentum
(momentum > 0 only); the engine numbers them RMSProp, RMSProp_1, RMSProp_2 in that order, so RMSProp_1 is
mg or momentum depending on the model's optimizer. A slot that cannot be matched is reported missing.
"""

from estimators.checkpoint.mapping import restore_plan

V = "dense/kernel"


def _plan(model_slots, stored_slots):
    variables = {V: "kernel", **{f"{V}/{suffix}": suffix for suffix in model_slots}}
    stored = [V, *(f"training/RMSprop/{V}/{slot}" for slot in stored_slots)]
    return {source: variable for source, variable in restore_plan(variables, stored).items() if source != V}


def test_centered_rmsprop_with_momentum_takes_mg_then_momentum():
    assert _plan(["RMSProp", "RMSProp_1", "RMSProp_2"], ["rms", "mg", "momentum"]) == {
        f"training/RMSprop/{V}/rms": "RMSProp", f"training/RMSprop/{V}/mg": "RMSProp_1",
        f"training/RMSprop/{V}/momentum": "RMSProp_2"}


def test_rmsprop_with_momentum_takes_momentum_as_its_second_slot():
    assert _plan(["RMSProp", "RMSProp_1"], ["rms", "momentum"])[f"training/RMSprop/{V}/momentum"] == "RMSProp_1"


def test_a_centered_model_does_not_fill_mg_from_a_checkpoint_s_momentum():
    plan = _plan(["RMSProp", "RMSProp_1", "RMSProp_2"], ["rms", "momentum"])
    assert plan[f"{V}/RMSProp_1"] == "RMSProp_1"  # kept under its own name: restore() reports it missing
    assert plan[f"training/RMSprop/{V}/momentum"] == "RMSProp_2"


def test_a_second_slot_that_could_be_either_of_a_checkpoint_s_two_is_reported_missing():
    plan = _plan(["RMSProp", "RMSProp_1"], ["rms", "mg", "momentum"])
    assert plan[f"{V}/RMSProp_1"] == "RMSProp_1"
