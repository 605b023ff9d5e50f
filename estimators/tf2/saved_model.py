"""Writing the SavedModel: a complete export under export_dir_base/<timestamp>, or nothing.

The SavedModel is written to `temp-<timestamp>` beside its final place and published when complete
(export/publish.py: at once on a local filesystem, the model file last on gs://). Signature method names are set
as tf.estimator set them (classify, regress, predict), so TensorFlow Serving's Classify and
Regress APIs accept the export; `as_text` writes saved_model.pbtxt instead of saved_model.pb.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.trackable.resource import ResourceTracker, resource_tracker_scope

from estimators import log as logging
from estimators.export.publish import publish_export
from estimators.export.serving_graph import trace_signatures
from estimators.mode_keys import ModeKeys
from estimators.tf2.predict_model import PredictModel

_PB = tf.saved_model.SAVED_MODEL_FILENAME_PB
_PBTXT = tf.saved_model.SAVED_MODEL_FILENAME_PBTXT
_FINGERPRINT = "fingerprint.pb"


def export_saved_model(model_fn: Callable, params: dict, config: Any, checkpoint_path: str, export_dir_base: str,
                       serving_input_receiver_fn: Callable[[], Any], assets_extra: dict | None = None,
                       as_text: bool = False, experimental_mode: str = ModeKeys.PREDICT) -> bytes:
    """Exports model_fn (PREDICT) with the weights of `checkpoint_path`; returns the export dir (bytes)."""
    if not serving_input_receiver_fn:
        raise ValueError("serving_input_receiver_fn must be given (a function returning a ServingInputReceiver).")
    if experimental_mode != ModeKeys.PREDICT:
        raise ValueError(
            f"experimental_mode={experimental_mode!r} is not supported: only ModeKeys.PREDICT exports a "
            "SavedModel here (TRAIN/EVAL graphs need TF1 sessions to run)."
        )
    if assets_extra is not None and not isinstance(assets_extra, dict):
        raise ValueError(f"assets_extra must be a dict of relative destination -> source path, got {assets_extra!r}.")
    model = PredictModel(model_fn, params, config)
    resources = ResourceTracker()  # lookup tables etc. model_fn or the receiver fn made: the export must hold them
    with resource_tracker_scope(resources):
        signatures, method_names = trace_signatures(serving_input_receiver_fn, model)
    model.restore(checkpoint_path)
    module = tf.Module()
    for name, value in model.trackables().items():
        setattr(module, name, value)
    module.resources = list(resources.resources)


    def write(temporary: str) -> None:
        tf.saved_model.save(module, temporary, signatures=signatures)
        _set_method_names_and_format(temporary, method_names, as_text)

    final = publish_export(export_dir_base, write, assets_extra)
    logging.info("Exported SavedModel with signatures %s from %s to %s", sorted(signatures), checkpoint_path, final)
    return final.encode()


def _set_method_names_and_format(export_dir: str, method_names: dict[str, str], as_text: bool) -> None:
    """Rewrites the SavedModel proto with tf.estimator's method names, in text if asked."""
    path = os.path.join(export_dir, _PB)
    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString(tf.io.gfile.GFile(path, "rb").read())
    changed = False
    for meta_graph in proto.meta_graphs:
        for name, method in method_names.items():
            signature = meta_graph.signature_def.get(name)
            if signature is not None and signature.method_name != method:
                signature.method_name = method
                changed = True
    if as_text:
        from google.protobuf import text_format

        with tf.io.gfile.GFile(os.path.join(export_dir, _PBTXT), "w") as f:
            f.write(text_format.MessageToString(proto))
        tf.io.gfile.remove(path)
        _drop_fingerprint(export_dir)  # it fingerprints saved_model.pb, which is gone
    elif changed:
        with tf.io.gfile.GFile(path, "wb") as f:
            f.write(proto.SerializeToString())
        _refresh_fingerprint(export_dir)


def _refresh_fingerprint(export_dir: str) -> None:
    """fingerprint.pb for the rewritten saved_model.pb (TensorFlow's own writer), or none at all."""
    try:
        from tensorflow.python.saved_model import fingerprinting_utils

        fingerprinting_utils.write_fingerprint(export_dir)
    except Exception as err:  # noqa: BLE001 - optional metadata: better absent than stale
        logging.info("Could not refresh %s (%s); leaving it out.", _FINGERPRINT, err)
        _drop_fingerprint(export_dir)


def _drop_fingerprint(export_dir: str) -> None:
    path = os.path.join(export_dir, _FINGERPRINT)
    if tf.io.gfile.exists(path):
        tf.io.gfile.remove(path)
