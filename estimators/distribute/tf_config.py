"""The cluster a process belongs to, read from TF_CONFIG as tf.estimator.RunConfig read it.

RunConfig's `cluster_spec`, `task_type`, `task_id`, `is_chief`, `num_worker_replicas`,
`num_ps_replicas`, `global_id_in_cluster`, `master`, `evaluation_master`, `service` and a
`model_dir` given in TF_CONFIG come from here. One difference from 2.15: a cluster of workers
without a `chief` is accepted (worker 0 is the chief), as tf.distribute's MultiWorkerMirroredStrategy
(and 2.15 itself when given such a strategy) reads it; 2.15 refused it without a strategy.
"""

from __future__ import annotations

import dataclasses
import json
import os

import tensorflow as tf

CHIEF, MASTER, WORKER, PS, EVALUATOR = "chief", "master", "worker", "ps", "evaluator"


@dataclasses.dataclass(frozen=True)
class ClusterInfo:
    """What TF_CONFIG says about this process (the defaults describe a single local process)."""

    cluster_spec: tf.train.ClusterSpec = dataclasses.field(default_factory=lambda: tf.train.ClusterSpec({}))
    task_type: str = WORKER
    task_id: int = 0
    is_chief: bool = True
    num_worker_replicas: int = 1
    num_ps_replicas: int = 0
    global_id_in_cluster: int | None = 0
    master: str = ""
    evaluation_master: str = ""
    service: dict | None = None
    model_dir: str | None = None


def read_tf_config(raw: str | None = None) -> dict:
    """TF_CONFIG as a dict ({} when unset); ValueError naming the problem when it is not a JSON object."""
    raw = os.environ.get("TF_CONFIG", "") if raw is None else raw
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as err:
        raise ValueError(f"TF_CONFIG is not valid JSON ({err}): {raw[:200]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object with 'cluster' and 'task', got {raw[:200]!r}")
    return value


def _chief_job(jobs: dict) -> str | None:
    if MASTER in jobs:
        if CHIEF in jobs:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not supported: TF_CONFIG's cluster "
                             "has both a 'master' and a 'chief' job; keep one.")
        return MASTER
    return CHIEF if CHIEF in jobs else None


def _global_id(jobs: dict, chief_job: str | None, task_type: str, task_id: int) -> int:
    """Chief first, then the other jobs in name order, parameter servers last (2.15's numbering)."""
    order = ([chief_job] if chief_job else []) + sorted(j for j in jobs if j not in (chief_job, PS))
    order += [PS] if PS in jobs else []
    offset = 0
    for job in order:
        if job == task_type:
            return offset + task_id
        offset += len(jobs[job])
    raise ValueError(f"TF_CONFIG task type {task_type!r} is not a job of the cluster {sorted(jobs)}.")


def cluster_info(tf_config: dict | None = None) -> ClusterInfo:
    """ClusterInfo for `tf_config` (default: the TF_CONFIG environment variable), validated as 2.15 did."""
    tf_config = read_tf_config() if tf_config is None else tf_config
    service = tf_config.get("service")
    if service is not None and not isinstance(service, dict):
        raise TypeError(f"If \"service\" is set in TF_CONFIG, it must be a dict. Given {service!r}: make it a JSON "
                        "object.")
    model_dir = tf_config.get("model_dir")
    if model_dir == "":
        raise ValueError("model_dir in TF_CONFIG should be non-empty: remove it or name a folder.")
    jobs = {job: list(tasks.values()) if isinstance(tasks, dict) else list(tasks)
            for job, tasks in (tf_config.get("cluster") or {}).items()}
    task = tf_config.get("task") or {}
    task_type = task.get("type")
    task_id = task.get("index")
    eval_master = tf_config.get("eval_session_master", "")
    if not jobs:
        task_type, task_id = task_type or WORKER, int(task_id or 0)
        if task_type != WORKER:
            raise ValueError(f"If \"cluster\" is not set in TF_CONFIG, task type must be WORKER: without a cluster "
                             f"the task is worker 0, not {task_type} {task_id}.")
        if task_id != 0:
            raise ValueError(f"If \"cluster\" is not set in TF_CONFIG, task index must be 0: without a cluster the "
                             f"task is worker 0, not {task_type} {task_id}.")
        return ClusterInfo(master=tf_config.get("session_master", ""), evaluation_master=eval_master,
                           service=service, model_dir=model_dir)
    chief_job = _chief_job(jobs)
    if chief_job and len(jobs[chief_job]) > 1:
        raise ValueError(f"The \"cluster\" in TF_CONFIG must have only one \"{chief_job}\" node: it has "
                         f"{len(jobs[chief_job])} '{chief_job}' tasks.")
    if not task_type:
        if not chief_job:  # 2.15 checked for the chief first; a chief-less cluster needs a task to name a worker
            raise ValueError("If \"cluster\" is set in TF_CONFIG, it must have one \"chief\" node, or \"task\" must be "
                             "set: add a \"chief\" job, or \"task\": {\"type\": ..., \"index\": ...}.")
        raise ValueError("If \"cluster\" is set in TF_CONFIG, task type must be set: add \"task\": {\"type\": ..., "
                         "\"index\": ...}.")
    if task_id is None:
        raise ValueError("If \"cluster\" is set in TF_CONFIG, task index must be set: add \"index\" to its \"task\".")
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError(f"Task index must be non-negative number: TF_CONFIG's task index is {task_id}.")
    if task_type == EVALUATOR:
        if chief_job == MASTER:
            raise ValueError("If `master` node exists in `cluster`, task_type `evaluator` is not supported: an "
                             "'evaluator' task cannot join a cluster with a 'master' job.")
        return ClusterInfo(task_type=EVALUATOR, task_id=task_id, is_chief=False, num_worker_replicas=0,
                           global_id_in_cluster=None, evaluation_master=eval_master, service=service,
                           model_dir=model_dir)
    if task_type not in jobs:
        raise ValueError(f"{task_type} is not a valid task_type in the cluster_spec {jobs}: TF_CONFIG's task must "
                         "name one of the cluster's jobs.")
    if not 0 <= task_id < len(jobs[task_type]):
        raise ValueError(f"{task_id} is not a valid task_id for task_type {task_type} in the cluster_spec {jobs}: "
                         f"TF_CONFIG's task index must be below {len(jobs[task_type])}.")
    if "session_master" in tf_config:
        master = tf_config["session_master"]
    elif len(jobs) == 1 and len(next(iter(jobs.values()))) == 1:
        master = ""
    else:
        master = "grpc://" + jobs[task_type][task_id]
    is_chief = task_type == chief_job if chief_job else (task_type == WORKER and task_id == 0)
    return ClusterInfo(
        cluster_spec=tf.train.ClusterSpec(jobs), task_type=task_type, task_id=task_id, is_chief=is_chief,
        num_worker_replicas=len(jobs.get(WORKER, [])) + (len(jobs[chief_job]) if chief_job else 0),
        num_ps_replicas=len(jobs.get(PS, [])), global_id_in_cluster=_global_id(jobs, chief_job, task_type, task_id),
        master=master, service=service, model_dir=model_dir,
    )

