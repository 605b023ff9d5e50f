"""TPUEstimator's own view of a run, per mode: which master and which TPU job it uses (2.15's `est._ctx`).

2.15 kept an internal context on every TPUEstimator; `with est._ctx.with_mode(mode) as ctx` gave a
copy bound to a mode, whose `master_job` named the job TPU computations are placed on: the
TPUConfig's tpu_job_name if set; else none for a local master ('' or 'local'); else the job of
session_config.cluster_def when that can be told (one job, or one job beside "coordinator"), or
"tpu_worker" without a cluster_def. Evaluation uses RunConfig.evaluation_master, the rest master.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

from tensorflow.python.tpu import tpu_system_metadata

from estimators.mode_keys import ModeKeys

_LOCAL_MASTERS = (None, "", "local")


class TPUJobContext:
    """The settings of one TPUEstimator; `with_mode(mode)` binds a copy to a mode for the per-mode answers."""

    def __init__(self, config: Any, use_tpu: bool, eval_on_tpu: bool):
        self._config = config
        self._use_tpu = use_tpu
        self._eval_on_tpu = eval_on_tpu
        self._mode: str | None = None

    @contextlib.contextmanager
    def with_mode(self, mode: str) -> Iterator[TPUJobContext]:
        bound = copy.copy(self)
        bound._mode = mode
        yield bound

    @property
    def config(self) -> Any:
        return self._config

    @property
    def mode(self) -> str:
        if self._mode is None:
            raise RuntimeError("`mode` needs to be set via contextmanager `with_mode`.")
        return self._mode

    def is_running_on_cpu(self) -> bool:
        """Off the TPU: use_tpu=False, or evaluation with eval_on_tpu=False."""
        return not self._use_tpu or (self.mode == ModeKeys.EVAL and not self._eval_on_tpu)

    @property
    def master(self) -> str | None:
        """The master this mode talks to: evaluation_master for evaluation, master otherwise."""
        return self._config.evaluation_master if self.mode == ModeKeys.EVAL else self._config.master

    @property
    def master_job(self) -> str | None:
        """The job TPU computations are placed on, or None (a local master: no job named)."""
        job_name = self._config.tpu_config.tpu_job_name
        if job_name:
            return job_name
        master = self.master
        if master in _LOCAL_MASTERS:
            return None
        session_config = self._config.session_config
        cluster_def = session_config.cluster_def if session_config is not None else None
        try:
            return tpu_system_metadata.master_job(master, cluster_def)
        except ValueError as e:
            raise ValueError(f"{e} Please specify a tpu_job_name as part of your TPUConfig.") from e
