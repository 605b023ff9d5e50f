"""SavedModel export for serving: model_fn in PREDICT mode behind a `serving_default` signature.

TF2 has no placeholders, so a serving input receiver names the signature's inputs as
tf.TensorSpecs and maps them to model_fn's features. The SavedModel is written to a temporary
folder beside its final place and renamed when complete: export_dir_base never holds half an export.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from absl import logging

from estimators.checkpoint import checkpoints
from estimators.mode_keys import ModeKeys
from estimators.runtime.state import Runtime


@dataclasses.dataclass(frozen=True)
class ServingInputReceiver:
    """The serving signature's inputs (name -> TensorSpec) and how they become model_fn features."""

    receiver_tensors: dict
    features_fn: Callable[[dict], Any] | None = None

    def features(self, inputs: dict) -> Any:
        if self.features_fn is not None:
            return self.features_fn(inputs)
        return next(iter(inputs.values())) if len(inputs) == 1 else inputs


def build_raw_serving_input_receiver_fn(specs: dict | tf.TensorSpec) -> Callable[[], ServingInputReceiver]:
    """A receiver fn whose inputs are fed to model_fn as they are (a dict, or one tensor)."""
    if isinstance(specs, tf.TensorSpec):
        specs = {specs.name or "features": specs}
    for name, spec in specs.items():
        if not isinstance(spec, tf.TensorSpec):
            raise ValueError(f"serving input {name!r} must be a tf.TensorSpec, got {type(spec).__name__}.")
    return lambda: ServingInputReceiver(dict(specs))


def _outputs(predictions: Any) -> dict:
    if isinstance(predictions, dict):
        return dict(predictions)
    return {"output": predictions}


def export_saved_model(model_fn: Callable, params: dict, config: Any, checkpoint_path: str, export_dir_base: str,
                       serving_input_receiver_fn: Callable[[], ServingInputReceiver],
                       assets_extra: dict | None = None, as_text: bool = False) -> bytes:
    """Exports model_fn (PREDICT) with the weights of `checkpoint_path`; returns the export dir."""
    if as_text:
        raise ValueError("as_text=True is not supported by tf.saved_model.save; export the binary proto.")
    receiver = serving_input_receiver_fn()
    if not isinstance(receiver, ServingInputReceiver):
        raise ValueError(
            "serving_input_receiver_fn must return estimators.export.ServingInputReceiver, got "
            f"{type(receiver).__name__}; see build_raw_serving_input_receiver_fn."
        )
    runtime = Runtime(tf.distribute.get_strategy(), model_fn, params, config, static_shapes=False)

    def serve(**inputs):
        spec, _ = runtime.steps.call(ModeKeys.PREDICT, receiver.features(inputs), None, batch_size=None)
        return _outputs(spec.predictions)

    signature = tf.function(serve, input_signature=None).get_concrete_function(**receiver.receiver_tensors)
    variables = runtime.model_variables()
    checkpoints.restore(checkpoint_path, variables)
    module = tf.Module()
    module.model_variables = list(variables.values())
    module.global_step = runtime.global_step
    module.serve = signature

    final = os.path.join(export_dir_base, str(int(time.time())))
    while tf.io.gfile.exists(final):
        final = os.path.join(export_dir_base, str(int(final.rsplit(os.sep, 1)[-1]) + 1))
    temporary = os.path.join(export_dir_base, "temp-" + os.path.basename(final))
    tf.io.gfile.makedirs(export_dir_base)
    try:
        tf.saved_model.save(module, temporary, signatures={"serving_default": signature})
        for relative, source in (assets_extra or {}).items():
            destination = os.path.join(temporary, "assets.extra", relative)
            tf.io.gfile.makedirs(os.path.dirname(destination))
            tf.io.gfile.copy(source, destination, overwrite=True)
        tf.io.gfile.rename(temporary, final)
    except BaseException:
        if tf.io.gfile.exists(temporary):
            tf.io.gfile.rmtree(temporary)
        raise
    logging.info("Exported SavedModel for step %d to %s", checkpoints.global_step_of(checkpoint_path), final)
    return final.encode()
