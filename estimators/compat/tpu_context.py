"""params['context']: TPUEstimator 2.15's TPUContext, which is also the tf.distribute InputContext.

input_fn and model_fn both get one. As in 2.15, `current_host` and `current_input_fn_deployment()`
answer only in input_fn and `device_assignment` only in model_fn (None: no model parallelism).
As an InputContext it describes this input_fn call: `num_input_pipelines` is how many calls
feed the replicas (hosts, or replicas with PER_SHARD_V1), `input_pipeline_id` this call's index,
so `dataset.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)` gives each call its share.
Unlike 2.15, the context is also there when running on CPU/GPUs (2.15 gave none there).
"""

from __future__ import annotations

import tensorflow as tf


def host_device(host: int, num_hosts: int) -> str:
    """The CPU device of input host `host` (the form 2.15 used for a local TPU, with a job across hosts)."""
    return f"/job:worker/task:{host}/device:CPU:0" if num_hosts > 1 else f"/replica:0/task:{host}/device:CPU:0"


class TPUContext(tf.distribute.InputContext):
    """The replicas, hosts and input deployment of a TPUEstimator call (2.15's TPUContext API)."""

    def __init__(self, *, num_replicas: int, num_hosts: int, running_on_cpu: bool, from_input_fn: bool,
                 current_host: int = 0, invocation_index: int = 0, num_invocations: int | None = None,
                 replicas_per_invocation: int | None = None):
        num_invocations = num_hosts if num_invocations is None else num_invocations
        super().__init__(num_input_pipelines=num_invocations, input_pipeline_id=invocation_index,
                         num_replicas_in_sync=num_replicas)
        self._num_replicas = num_replicas
        self._num_hosts = num_hosts
        self._running_on_cpu = running_on_cpu
        self._from_input_fn = from_input_fn
        self._current_host = current_host
        self._invocation_index = invocation_index
        self._num_invocations = num_invocations
        self._replicas_per_invocation = (num_replicas // num_invocations if replicas_per_invocation is None
                                         else replicas_per_invocation)

    def _input_fn_only(self, what: str) -> None:
        if not self._from_input_fn:
            raise RuntimeError(f"TPUContext.{what} answers only in input_fn (this context was given to model_fn).")

    def current_input_fn_deployment(self) -> tuple[str, int, int, int]:
        """(host CPU device, this input_fn call's index, number of calls, replicas this call feeds)."""
        self._input_fn_only("current_input_fn_deployment()")
        return (host_device(self._current_host, self._num_hosts), self._invocation_index, self._num_invocations,
                self._replicas_per_invocation)

    @property
    def num_replicas(self) -> int:
        """Replicas in sync (TPU cores, GPUs, or 1 on the CPU)."""
        return self._num_replicas

    @property
    def num_hosts(self) -> int:
        """Input hosts (workers): 1 except on TPU pods and multi-worker clusters."""
        return self._num_hosts

    @property
    def num_of_replicas_per_host(self) -> int:
        return self._num_replicas // self._num_hosts

    @property
    def current_host(self) -> int:
        """The index of the host calling input_fn."""
        self._input_fn_only("current_host")
        return self._current_host

    @property
    def device_assignment(self) -> None:
        """None: every replica is one core (no model parallelism). Answers only in model_fn, as in 2.15."""
        if self._from_input_fn:
            raise RuntimeError("TPUContext.device_assignment answers only in model_fn (this context was given "
                               "to input_fn).")
        return None

    def device_for_replica(self, replica_id: int) -> tuple[str, int]:
        """(host CPU device, device ordinal on that host) of replica `replica_id`."""
        per_host = self.num_of_replicas_per_host
        return host_device(replica_id // per_host, self._num_hosts), replica_id % per_host

    @property
    def tpu_host_placement_function(self):
        """A function host_id -> that host's CPU device."""
        return lambda host_id: host_device(host_id, self._num_hosts)

    def is_running_on_cpu(self) -> bool:
        """True unless this call runs on a TPU (use_tpu=False, or evaluation with eval_on_tpu=False)."""
        return self._running_on_cpu

    def __repr__(self) -> str:
        where = "input_fn" if self._from_input_fn else "model_fn"
        return (f"TPUContext({where}: {self._num_replicas} replicas on {self._num_hosts} host(s), call "
                f"{self._invocation_index} of {self._num_invocations}, running_on_cpu={self._running_on_cpu})")
