"""model_fn once per replica under a tf.distribute strategy in graph mode, as tf.estimator 2.15 ran
train_distribute / eval_distribute: input_fn once per worker (with its InputContext), each replica taking
its own batch from it; the replicas' specs combined into one that a session runs (the loss reduced as
2.15 reported it, train ops and metric updates grouped, hooks from the first replica, one Scaffold).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from tensorflow.python.distribute import values as distribute_values
from tensorflow.python.eager import context
from tensorflow.python.training import training_util

from estimators.compat.input_fn_call import bound_input_fn
from estimators.graph.specs import SessionSpec, call_model_fn
from estimators.mode_keys import ModeKeys

_servers: dict[str, Any] = {}  # this process's tf.distribute.Server per task address (one per process)


def spans_workers(strategy: Any) -> bool:
    """Whether `strategy`'s replicas live in several worker processes (a TF_CONFIG cluster)."""
    return strategy is not None and bool(getattr(strategy.extended, "_cluster_spec", None)) and \
        strategy.extended._num_workers > 1  # noqa: SLF001


def session_target(strategy: Any, session_config: Any) -> tuple[str, Any]:
    """(master, ConfigProto) for this process's sessions under `strategy`: ("", session_config) on one machine.

    Across workers a session runs on this task's server, its config naming the collective group leader (what
    2.15's distribute coordinator set up): the server TensorFlow started for a strategy made eagerly, else one
    started here once per process (a program with eager execution disabled).
    """
    if not spans_workers(strategy):
        return "", local_session_config(session_config)
    config = strategy.update_config_proto(session_config or tf.compat.v1.ConfigProto())
    resolver = strategy.cluster_resolver
    cluster = resolver.cluster_spec()
    address = cluster.task_address(resolver.task_type, resolver.task_id)
    if getattr(strategy.extended, "_std_server_started", False):
        return f"grpc://{address}", config
    if address not in _servers:
        _servers[address] = tf.distribute.Server(cluster, job_name=resolver.task_type, task_index=resolver.task_id,
                                                 config=config, start=True)
    return _servers[address].target, config


def local_session_config(session_config: Any) -> Any:
    """`session_config` over this process's device setup, for an in-process session.

    A tf.compat.v1.Session given a ConfigProto sees only the devices it names, not the logical devices
    the program configured (tf.config.set_logical_device_configuration: 8 CPUs standing in for a TPU's
    cores, or split GPUs); TensorFlow fills them in only for a session given no config. Without them
    every replica of a MirroredStrategy is soft-placed on CPU:0 and its per-device input deadlocks. So
    the process's own config (context.context().config) comes first and the given settings win over it.
    None stays None (the session then takes the process's config itself).
    """
    if session_config is None:
        return None
    merged = context.context().config
    merged.MergeFrom(session_config)
    return merged


class _DistributedIteratorInitializer(tf.compat.v1.train.SessionRunHook):
    """Initialises a distributed iterator when the session is created (2.15's DistributedIteratorInitializerHook)."""

    def __init__(self, iterator: Any):
        self._initializer = iterator.initialize()

    def after_create_session(self, session, coord) -> None:
        del coord
        session.run(self._initializer)


def input_iterator(strategy: Any, input_fn: Callable, *, mode: str, params: dict, config: Any) -> tuple[Any, Any, list]:
    """(features, labels, hooks): input_fn called per worker with its InputContext; each replica's next batch."""

    def dataset_fn(input_context: Any) -> tf.data.Dataset:
        result = bound_input_fn(input_fn, mode=mode, params=params, config=config, input_context=input_context)()
        if not isinstance(result, tf.data.Dataset):
            raise ValueError(
                f"input_fn returned a {type(result).__name__}; under train_distribute/eval_distribute tf.estimator "
                "needs it to return a tf.data.Dataset (each replica takes its own batch from it). Return "
                "tf.data.Dataset.from_tensor_slices(...).batch(per_replica_batch_size), or drop the strategy.")
        return result

    iterator = strategy.make_input_fn_iterator(dataset_fn)
    hooks = [_DistributedIteratorInitializer(iterator)]
    element = iterator.get_next()
    if isinstance(element, (tuple, list)) and len(element) == 2:
        features, labels = element
    else:
        features, labels = element, None
    return features, labels, hooks


def _loss_reduction() -> Any:
    """How 2.15 reduced the replicas' losses for reporting: as the v1 optimizers scaled them, else their sum."""
    if getattr(tf.compat.v1.get_default_graph(), "_is_loss_scaled_by_optimizer", False):
        return tf.compat.v1.distribute.get_loss_reduction()
    return tf.distribute.ReduceOp.SUM


def _per_replica(values: list) -> Any:
    return values[0] if len(values) == 1 else distribute_values.PerReplica(tuple(values))


def replicated_spec(strategy: Any, model_fn: Callable, features: Any, labels: Any, mode: str, params: dict,
                    config: Any) -> SessionSpec:
    """model_fn called in every replica (in the strategy's scope), the results combined into one SessionSpec."""
    tf.compat.v1.add_to_collection(training_util.GLOBAL_STEP_READ_KEY,
                                   strategy.extended.read_var(tf.compat.v1.train.get_global_step()))
    grouped = strategy.extended.call_for_each_replica(
        lambda feats, labs: call_model_fn(model_fn, feats, labs, mode, params, config), args=(features, labels))
    specs = list(strategy.experimental_local_results(grouped))
    first = specs[0]
    losses = _per_replica([s.loss for s in specs])
    combined = dataclasses.replace(first, scaffold=_combined_scaffold([s.scaffold for s in specs]))
    if mode == ModeKeys.TRAIN:
        combined.loss = strategy.reduce(_loss_reduction(), losses, axis=None)
        combined.train_op = tf.group(*[s.train_op for s in specs])
    elif mode == ModeKeys.EVAL:
        combined.loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, losses, axis=None)
        combined.eval_metric_ops = {
            name: (metric[0], tf.group(*[s.eval_metric_ops[name][1] for s in specs]))
            for name, metric in first.eval_metric_ops.items()}
        mean = strategy.extended.call_for_each_replica(tf.compat.v1.metrics.mean, args=(losses,))
        value, updates = mean
        combined.loss_metric = (strategy.experimental_local_results(value)[0],
                                tf.group(*strategy.experimental_local_results(updates)))
    return combined


def _combined_scaffold(scaffolds: list) -> tf.compat.v1.train.Scaffold:
    """One Scaffold for the replicas' (2.15's _combine_distributed_scaffold): the first init_fn, saver and
    ready ops; every replica's init and local-init ops."""
    first = scaffolds[0]
    if len(scaffolds) == 1:
        return first

    def grouped(name: str) -> Any:
        ops = [getattr(s, name) for s in scaffolds if getattr(s, name) is not None]
        return tf.group(*ops) if ops else None

    return tf.compat.v1.train.Scaffold(
        init_op=grouped("init_op"), local_init_op=grouped("local_init_op"), init_feed_dict=first.init_feed_dict,
        init_fn=first._user_init_fn, ready_op=first.ready_op,  # noqa: SLF001
        ready_for_local_init_op=first.ready_for_local_init_op, summary_op=grouped("summary_op"),
        saver=next((s.saver for s in scaffolds if s.saver is not None), None))
