"""Picks the tf.distribute.Strategy a run uses: TPU, every GPU, one GPU, or the CPU."""

from __future__ import annotations

import json
import os
import socket
from typing import Any
from urllib.parse import urlparse

import tensorflow as tf

from estimators import log as logging
from estimators.distribute.platform import Platform
from estimators.distribute.platform import current as current_platform


class NoTPUError(RuntimeError):
    """use_tpu=True, but no TPU can be reached."""


_WHERE_TPUS_ARE = (
    "Pass --tpu=local on a Colab or Cloud TPU VM, --tpu=grpc://HOST:8470 for a TPU by address, or "
    "--tpu=NAME on a Google Cloud VM in the TPU's project and zone; or drop --use_tpu to run on GPUs/CPU."
)

# TPU systems this process has initialised, by the resolver's master address. Initialising a TPU
# again wipes its memory, and with it the variables of any estimator already running there.
_initialised_tpus: dict[str, Any] = {}


def _check_grpc_reachable(address: str, timeout: float = 5.0) -> None:
    """NoTPUError unless something accepts a TCP connection at the grpc address (port 8470 if none)."""
    parsed = urlparse(address if "://" in address else f"grpc://{address}")
    try:
        host, port = parsed.hostname, parsed.port or 8470
    except ValueError:
        host = port = None
    if not host or not port:
        raise NoTPUError(f"use_tpu=True but {address!r} is not a TPU address; write it as grpc://HOST:PORT.")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as err:
        raise NoTPUError(
            f"use_tpu=True but the TPU at {address!r} did not answer on {host}:{port} ({err}). "
            "Check --tpu (a TPU name, grpc://host:port, or 'local' on a TPU VM)."
        ) from None


def tpu_cluster_resolver(tpu: str | None, platform: Platform | None = None):
    """A TPUClusterResolver for a TPU name, a grpc address or 'local'; one clear error when none answers.

    `None` and `''` mean 'local' (the TPU attached to this VM), where tf.distribute would instead ask
    the Cloud TPU API for a TPU named by $TPU_NAME.
    """
    platform = platform or current_platform()
    tpu = tpu or "local"
    if tpu == "local":
        if not platform.physical_devices("TPU"):
            raise NoTPUError(
                "use_tpu=True with tpu='local', but this machine has no TPU devices. On a Colab or "
                "Cloud TPU VM install tensorflow-tpu (see BUILD_NOTES.md); elsewhere pass --tpu=NAME "
                "or --tpu=grpc://HOST:8470, or drop --use_tpu to run on GPU/CPU."
            )
    elif tpu.startswith("grpc://"):
        _check_grpc_reachable(tpu)
    try:
        return platform.tpu_resolver(tpu)
    except Exception as err:  # URLError off Google Cloud, HttpError for a wrong name, ImportError, ValueError
        raise NoTPUError(
            f"use_tpu=True but TPU {tpu!r} could not be resolved ({type(err).__name__}: {err}). {_WHERE_TPUS_ARE}"
        ) from None


def _master(resolver) -> str:
    try:
        return str(resolver.master())
    except Exception:  # a resolver that cannot name its master is keyed by identity
        return f"resolver-{id(resolver)}"


def tpu_strategy(resolver, platform: Platform | None = None) -> tf.distribute.Strategy:
    """Connects to the TPU system behind `resolver`, initialises it once per process, returns a TPUStrategy.

    The order is the documented one: connect to the cluster, initialise the TPU system, then build
    the strategy (TPUStrategy reads the topology the initialisation found).
    """
    platform = platform or current_platform()
    master = _master(resolver)
    if master in _initialised_tpus:
        logging.info("TPU system %r is already initialised in this process; reusing it.", master or "local")
    else:
        try:
            platform.connect(resolver)
        except Exception as err:
            raise NoTPUError(
                f"use_tpu=True but connecting to the TPU cluster {master or 'local'!r} failed "
                f"({type(err).__name__}: {err}). {_WHERE_TPUS_ARE}"
            ) from None
        try:
            _initialised_tpus[master] = platform.initialize(resolver)
        except Exception as err:
            raise NoTPUError(
                f"use_tpu=True but the TPU system {master or 'local'!r} could not be initialised "
                f"({type(err).__name__}: {err}). A TPU serves one process at a time: stop any other "
                "process or notebook kernel using it (including JAX or PyTorch/XLA), then run again."
            ) from None
    strategy = platform.tpu_strategy(resolver)
    logging.info("Running on TPU %r with %s cores.", master or "local", getattr(strategy, "num_replicas_in_sync", "?"))
    return strategy


def local_strategy(num_gpus: int | None = None, platform: Platform | None = None) -> tf.distribute.Strategy:
    """The first `num_gpus` visible GPUs (default: all), or the CPU for none or num_gpus=0.

    Several GPUs run under MirroredStrategy, one under OneDeviceStrategy, none under the default strategy.
    """
    platform = platform or current_platform()
    gpus = list(platform.logical_devices("GPU"))
    if num_gpus is None:
        chosen = gpus
    else:
        if not isinstance(num_gpus, int) or isinstance(num_gpus, bool) or num_gpus < 0:
            raise ValueError(f"num_gpus must be an integer >= 0 (0 runs on the CPU), got {num_gpus!r}.")
        if num_gpus > len(gpus):
            visible = ", ".join(g.name for g in gpus) or "none"
            raise ValueError(
                f"num_gpus={num_gpus}, but {len(gpus)} GPU(s) are visible ({visible}). Pass num_gpus <= "
                f"{len(gpus)} (0 runs on the CPU), or check the driver (nvidia-smi), CUDA_VISIBLE_DEVICES "
                "and that TensorFlow was installed with GPU support (pip install -e \".[gpu]\")."
            )
        chosen = gpus[:num_gpus]
    if len(chosen) > 1:
        logging.info("Running on %d GPUs with MirroredStrategy.", len(chosen))
        return platform.mirrored_strategy([g.name for g in chosen])
    if len(chosen) == 1:
        logging.info("Running on one GPU (%s).", chosen[0].name)
        return platform.one_device_strategy(chosen[0].name)
    logging.info("Running on the CPU.")
    return platform.default_strategy()


def resolve_strategy(use_tpu: bool, configured, cluster=None, master: str | None = None,
                     num_gpus: int | None = None, platform: Platform | None = None) -> tf.distribute.Strategy:
    """The strategy for one mode: the configured one, else TPU when use_tpu, else local devices."""
    if configured is not None:
        return configured
    if use_tpu:
        resolver = cluster if cluster is not None else tpu_cluster_resolver(master, platform)
        return tpu_strategy(resolver, platform)
    return local_strategy(num_gpus, platform)


# Strategies whose graph-mode replication (call_for_each_replica, make_input_fn_iterator) the graph path runs:
# in one process, and across workers with collectives (MultiWorkerMirroredStrategy).
_GRAPH_REPLICATING = ("MirroredExtended", "OneDeviceExtended", "_DefaultDistributionExtended",
                      "CollectiveAllReduceExtended")


def graph_replication_unsupported(strategy: Any) -> str | None:
    """Why the graph path cannot replicate model_fn with `strategy` (None when it can, or without one)."""
    if strategy is None or type(strategy.extended).__name__ in _GRAPH_REPLICATING:
        return None
    return (f"{type(strategy).__name__} (the graph path replicates model_fn with MirroredStrategy, "
            "OneDeviceStrategy or MultiWorkerMirroredStrategy)")


def is_tpu_strategy(strategy: tf.distribute.Strategy) -> bool:
    return isinstance(strategy, (tf.distribute.TPUStrategy, tf.distribute.experimental.TPUStrategy))


def spans_workers(strategy: tf.distribute.Strategy) -> bool:
    """True when the strategy's replicas live in more than one process (multi-worker training)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or is_tpu_strategy(strategy):
        return False
    jobs = resolver.cluster_spec().as_dict()
    return sum(len(jobs.get(job, [])) for job in ("chief", "worker")) > 1


def num_input_hosts(strategy: tf.distribute.Strategy) -> int:
    """How many hosts feed the replicas: a TPU system's hosts, the workers of a multi-worker strategy, else 1."""
    if is_tpu_strategy(strategy):
        return int(getattr(strategy.extended, "num_hosts", 1))
    if spans_workers(strategy):
        jobs = strategy.cluster_resolver.cluster_spec().as_dict()
        return sum(len(jobs.get(job, [])) for job in ("chief", "worker"))
    return 1


def local_replicas(strategy: tf.distribute.Strategy) -> int:
    """Replicas this process feeds: a TPU host's cores, a worker's devices, else 1 (the default strategy)."""
    extended = strategy.extended
    per_host = getattr(extended, "num_replicas_per_host", None)  # TPUStrategy: worker_devices spans all hosts
    if per_host:
        return int(per_host)
    try:
        return len(extended.worker_devices)  # Mirrored / MultiWorkerMirrored: this worker's devices
    except RuntimeError:  # the default strategy: one replica
        return 1


def _tf_config_workers() -> int:
    """How many chief/worker tasks TF_CONFIG describes (0 when it is unset)."""
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return 0
    try:
        cluster = json.loads(raw).get("cluster", {})
    except (ValueError, AttributeError):
        raise ValueError(f"TF_CONFIG is not valid JSON with a 'cluster' entry: {raw[:200]!r}") from None
    return sum(len(cluster.get(job, [])) for job in ("chief", "worker"))


def multi_worker_strategy() -> tf.distribute.Strategy | None:
    """MultiWorkerMirroredStrategy when TF_CONFIG names several workers, else None.

    It must exist before TensorFlow runs its first op, so estimators create it in __init__.
    """
    if _tf_config_workers() < 2:
        return None
    try:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    except RuntimeError as err:
        raise RuntimeError(
            f"TF_CONFIG names several workers, but MultiWorkerMirroredStrategy could not start ({err}). "
            "Create the Estimator before running any other TensorFlow op in this process."
        ) from None
    logging.info("Running on %d replicas across workers.", strategy.num_replicas_in_sync)
    return strategy


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process writes checkpoints, summaries and exports (always, outside multi-worker)."""
    if not spans_workers(strategy):
        return True
    resolver = strategy.cluster_resolver
    jobs = resolver.cluster_spec().as_dict()
    if resolver.task_type == "chief":
        return True
    return resolver.task_type == "worker" and resolver.task_id == 0 and not jobs.get("chief")
