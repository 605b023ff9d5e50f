"""export_saved_model() on the graph path, as tf.estimator 2.15 wrote it: model_fn (PREDICT) on the receiver's
features in a fresh graph, the checkpoint restored by the Scaffold's Saver in a session, and a TF1 SavedModel
(tag 'serve', 2.15's signatures, the Scaffold's local init as main op) written beside its final place and
renamed when complete, as the TF2 path's export is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators import log as logging
from estimators.checkpoint import finite
from estimators.engine_context import EngineContext
from estimators.export.publish import publish_export
from estimators.export.receivers import materialize
from estimators.export.signatures import build_signatures, export_outputs_for_predict
from estimators.graph import replicated
from estimators.graph.build import seeded_graph
from estimators.graph.specs import call_model_fn
from estimators.mode_keys import ModeKeys


def export_saved_model(ctx: EngineContext, export_dir_base: str, serving_input_receiver_fn: Callable,
                       assets_extra: dict | None, as_text: bool, checkpoint_path: str) -> bytes:
    """Writes export_dir_base/<timestamp> from `checkpoint_path`; returns its path (bytes)."""
    if assets_extra is not None and not isinstance(assets_extra, dict):
        raise ValueError(f"assets_extra must be a dict of relative destination -> source path, got {assets_extra!r}.")
    finite.warn_if_nonfinite(checkpoint_path)  # reads the files: an op here would be exported with the graph
    with seeded_graph(ctx) as graph:
        receiver = materialize(serving_input_receiver_fn(), graph)
        spec = call_model_fn(ctx.deployment.graph_model_fn(ctx.model_fn), receiver.features, None, ModeKeys.PREDICT,
                             ctx.deployment.graph_model_fn_params(ModeKeys.PREDICT, export=True), ctx.config)
        outputs = export_outputs_for_predict(spec.export_outputs, spec.predictions)
        signatures = build_signatures(receiver.receiver_tensors, outputs, receiver.receiver_tensors_alternatives, [])
        signature_defs = {name: tf.compat.v1.saved_model.signature_def_utils.build_signature_def(
            {key: tf.compat.v1.saved_model.utils.build_tensor_info(t) for key, t in parts.inputs.items()},
            {key: tf.compat.v1.saved_model.utils.build_tensor_info(t) for key, t in parts.outputs.items()},
            parts.method_name) for name, parts in signatures.items()}
        scaffold = spec.scaffold
        local_init = scaffold.local_init_op or tf.compat.v1.train.Scaffold.default_local_init_op()
        saver = _graph_saver(scaffold.saver)

        def write(temporary: str) -> None:
            config = replicated.local_session_config(ctx.config.session_config)
            with tf.compat.v1.Session(config=config) as session:
                saver.restore(session, checkpoint_path)
                builder = tf.compat.v1.saved_model.Builder(temporary)
                builder.add_meta_graph_and_variables(
                    session, [tf.saved_model.SERVING], signature_def_map=signature_defs,
                    assets_collection=tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.ASSET_FILEPATHS),
                    main_op=local_init, saver=saver, strip_default_attrs=True)
                builder.save(as_text)

        final = publish_export(export_dir_base, write, assets_extra)
    logging.info("Exported SavedModel with signatures %s from %s to %s", sorted(signatures), checkpoint_path, final)
    return final.encode()


def _graph_saver(saver: Any) -> Any:
    """The Saver that restores the checkpoint and goes into the SavedModel: the Scaffold's, a sharded Saver of all
    variables without one, and for a tf.train.Checkpoint a Saver of the objects it tracks (2.15's export, as
    Scaffold.finalize does for training)."""
    if saver is None:
        return tf.compat.v1.train.Saver(sharded=True)
    if isinstance(saver, tf.train.Checkpoint):
        from tensorflow.python.checkpoint import graph_view

        return tf.compat.v1.train.Saver(var_list=graph_view.ObjectGraphView(saver).frozen_saveable_objects(),
                                        sharded=True)
    return saver
