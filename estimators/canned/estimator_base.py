"""The Estimator canned estimators share: it runs their model_fn on the graph path (a tf.Graph and sessions),
where feature columns, Keras 2 optimizers and their variable names are those tf.estimator 2.15 saved."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from estimators.estimator import Estimator
from estimators.run_config import RunConfig

_WHY = "a canned estimator builds its model with feature columns in a tf.Graph, as tf.estimator 2.15 did"


class CannedEstimator(Estimator):
    """An Estimator whose model_fn runs on the graph path from its first call."""

    def __init__(self, model_fn: Callable, model_dir: str | None = None, config: RunConfig | None = None,
                 warm_start_from: Any = None):
        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)
        self._use_graph_path(_WHY)
