"""What an execution path is given for one Estimator: its model_fn and params, config, checkpoints, deployment,
warm start, stop request and summary writers. Frozen: the executors read it, never the Estimator."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from estimators.checkpoint.checkpointer import Checkpointer
    from estimators.distribute.deployment import Deployment
    from estimators.run_config import RunConfig
    from estimators.training.preemption import StopRequest
    from estimators.training.summaries import SummaryWriters


@dataclasses.dataclass(frozen=True)
class EngineContext:
    """One Estimator as its executors see it (the TF2 path's estimators/tf2, the graph path's estimators/graph)."""

    model_fn: Callable
    params: Mapping[str, Any]
    config: RunConfig
    model_dir: str
    checkpointer: Checkpointer
    deployment: Deployment
    warm_start: Any  # WarmStartSettings or None
    stop: StopRequest  # set by SIGINT/SIGTERM during a call
    summaries: SummaryWriters
    graph_reason: str = ""  # on the graph path: why the program needs it

    def on_graph(self, reason: str) -> EngineContext:
        """This context for a graph-path call, naming why the program runs there."""
        return dataclasses.replace(self, graph_reason=reason)
