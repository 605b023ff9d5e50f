"""predict() on the graph path, as tf.estimator 2.15 ran it: one session over input_fn's data, yielding each
batch's predictions whole or example by example."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from estimators import log as logging
from estimators.engine_context import EngineContext
from estimators.graph import replicated
from estimators.graph.build import call_graph, ensure_saver, warm_start_when_fresh
from estimators.graph.hooks import session_hooks
from estimators.graph.saving import RestoredFiniteCheck
from estimators.mode_keys import ModeKeys


def predict(ctx: EngineContext, input_fn: Callable, predict_keys: Any, hooks: Any, path: str | None,
            yield_single_examples: bool) -> Iterator:
    """Predictions of the checkpoint at `path` (None: freshly initialised variables, as 2.15 warned)."""
    if path is None:
        logging.warning("Could not find trained model in model_dir: %s, running initialization to predict.",
                        ctx.model_dir)
    with call_graph(ctx, input_fn, ModeKeys.PREDICT) as built:
        warm_start_when_fresh(ctx, path)
        spec = built.spec
        predictions = _selected(spec.predictions, predict_keys)
        all_hooks = [*built.input_hooks, *session_hooks(hooks, "predict() hooks"), *spec.prediction_hooks,
                     RestoredFiniteCheck(path)]
        ensure_saver(spec.scaffold)
        creator = tf.compat.v1.train.ChiefSessionCreator(
            spec.scaffold, config=replicated.local_session_config(ctx.config.session_config),
            checkpoint_filename_with_path=path)
        session = tf.compat.v1.train.MonitoredSession(creator, hooks=all_hooks)
    # The caller runs between yields: the graph is no longer the default one, the session stays open.
    with session:
        while not session.should_stop():
            values = session.run(predictions)
            if not yield_single_examples:
                yield values
            elif isinstance(values, dict):
                for row in range(_batch_length(values)):
                    yield {key: value[row] for key, value in values.items()}
            else:
                yield from values


def _selected(predictions: Any, keys: Any) -> Any:
    if keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    keys = [keys] if isinstance(keys, str) else list(keys)
    missing = [key for key in keys if key not in predictions]
    if missing:
        raise ValueError(f"Expected to run at least one output from {sorted(predictions)}, provided {keys}; "
                         f"not found: {missing}.")
    return {key: predictions[key] for key in keys}


def _batch_length(values: dict) -> int:
    """The rows every prediction has (2.15's check: all share their first dimension)."""
    lengths = {key: np.shape(value)[0] if np.ndim(value) else None for key, value in values.items()}
    if None in lengths.values():
        raise ValueError(f"Predictions with no batch dimension cannot be yielded one example at a time: "
                         f"{sorted(k for k, n in lengths.items() if n is None)}. Use yield_single_examples=False.")
    if len(set(lengths.values())) > 1:
        raise ValueError(f"Batch length of predictions should be same. {lengths}")
    return next(iter(lengths.values()))
