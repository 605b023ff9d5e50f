"""Picks the tf.distribute.Strategy a run uses: TPU, every GPU, one GPU, or the CPU."""

from __future__ import annotations

import json
import os
import socket
from urllib.parse import urlparse

import tensorflow as tf
from absl import logging


class NoTPUError(RuntimeError):
    """use_tpu=True, but no TPU can be reached."""


def _check_grpc_reachable(address: str, timeout: float = 5.0) -> None:
    parsed = urlparse(address if "://" in address else f"grpc://{address}")
    host, port = parsed.hostname, parsed.port or 8470
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as err:
        raise NoTPUError(
            f"use_tpu=True but the TPU at {address!r} did not answer on {host}:{port} ({err}). "
            "Check --tpu (a TPU name, grpc://host:port, or 'local' on a TPU VM)."
        ) from None


def tpu_cluster_resolver(tpu: str | None):
    """A TPUClusterResolver for a TPU name, a grpc address or 'local'; one clear error when none answers."""
    tpu = tpu or "local"
    if tpu == "local":
        if not tf.config.list_physical_devices("TPU"):
            raise NoTPUError(
                "use_tpu=True with tpu='local', but this machine has no TPU devices. On a Colab or "
                "Cloud TPU VM install tensorflow-tpu (see BUILD_NOTES.md); elsewhere pass --tpu=NAME "
                "or --tpu=grpc://HOST:8470, or drop --use_tpu to run on GPU/CPU."
            )
    elif tpu.startswith("grpc://"):
        _check_grpc_reachable(tpu)
    try:
        return tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    except (ValueError, RuntimeError, tf.errors.OpError) as err:
        raise NoTPUError(f"use_tpu=True but TPU {tpu!r} could not be resolved: {err}") from None


def tpu_strategy(resolver) -> tf.distribute.Strategy:
    """Connects to the TPU system behind `resolver` and returns a TPUStrategy over its cores."""
    try:
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, RuntimeError, tf.errors.OpError) as err:
        raise NoTPUError(f"use_tpu=True but the TPU system could not be initialised: {err}") from None
    return tf.distribute.TPUStrategy(resolver)


def local_strategy() -> tf.distribute.Strategy:
    """Every visible GPU (MirroredStrategy), one GPU (OneDeviceStrategy), or the CPU (default)."""
    gpus = tf.config.list_logical_devices("GPU")
    if len(gpus) > 1:
        logging.info("Running on %d GPUs with MirroredStrategy.", len(gpus))
        return tf.distribute.MirroredStrategy([g.name for g in gpus])
    if len(gpus) == 1:
        logging.info("Running on one GPU.")
        return tf.distribute.OneDeviceStrategy(gpus[0].name)
    logging.info("Running on the CPU.")
    return tf.distribute.get_strategy()


def resolve_strategy(use_tpu: bool, configured, cluster=None, master: str | None = None) -> tf.distribute.Strategy:
    """The strategy for one mode: the configured one, else TPU when use_tpu, else local devices."""
    if configured is not None:
        return configured
    if use_tpu:
        resolver = cluster if cluster is not None else tpu_cluster_resolver(master)
        return tpu_strategy(resolver)
    return local_strategy()


def is_tpu_strategy(strategy: tf.distribute.Strategy) -> bool:
    return isinstance(strategy, (tf.distribute.TPUStrategy, tf.distribute.experimental.TPUStrategy))


def spans_workers(strategy: tf.distribute.Strategy) -> bool:
    """True when the strategy's replicas live in more than one process (multi-worker training)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or is_tpu_strategy(strategy):
        return False
    jobs = resolver.cluster_spec().as_dict()
    return sum(len(jobs.get(job, [])) for job in ("chief", "worker")) > 1


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
