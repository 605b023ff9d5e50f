"""model_fn in the graph: called once per train/evaluate/predict, its spec turned into what a session runs.

A TPUEstimatorSpec becomes what TPUEstimator 2.15 made of it off the TPU (`as_estimator_spec`):
scaffold_fn() is called in the graph for the Scaffold, `eval_metrics` become metric_fn's
eval_metric_ops (checked as EstimatorSpec checked them: a tf_keras metric object becomes its
(result, update_op) pair, as 2.15's EstimatorSpec made it), and `host_call` runs after every training
step through a hook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf
from tensorflow.python.ops import gen_summary_ops, summary_ops_v2

from estimators.compat.fn_args import bound_model_fn, model_fn_args
from estimators.graph import hooks as graph_hooks
from estimators.graph.metric_variables import made_as_metric_variables
from estimators.mode_keys import ModeKeys
from estimators.specs import TPUEstimatorSpec, validate_spec
from estimators.specs.checks import check_estimator_spec


@dataclass
class SessionSpec:
    """What a session runs for one mode: the spec's tensors and ops, its Scaffold, and its hooks."""

    mode: str
    loss: Any = None
    train_op: Any = None
    predictions: Any = None
    eval_metric_ops: dict = field(default_factory=dict)
    scaffold: Any = None
    training_hooks: list = field(default_factory=list)
    chief_hooks: list = field(default_factory=list)
    evaluation_hooks: list = field(default_factory=list)
    prediction_hooks: list = field(default_factory=list)
    export_outputs: dict | None = None
    loss_metric: Any = None  # (value, update) of the mean loss when replicas computed it; else made from loss


def call_model_fn(model_fn: Callable, features: Any, labels: Any, mode: str, params: dict, config: Any) -> SessionSpec:
    """Calls model_fn with the arguments it declares, in the current graph, and checks what it returned."""
    invoke = bound_model_fn(model_fn, model_fn_args(model_fn), features, labels, mode, params, config)
    spec = validate_spec(invoke(), mode, sessions=True)
    if isinstance(spec, TPUEstimatorSpec):
        return _from_tpu_spec(spec)
    scaffold = spec.scaffold or tf.compat.v1.train.Scaffold()
    return SessionSpec(mode, spec.loss, spec.train_op, spec.predictions, dict(spec.eval_metric_ops or {}), scaffold,
                       graph_hooks.session_hooks(spec.training_hooks, "EstimatorSpec.training_hooks"),
                       graph_hooks.session_hooks(spec.training_chief_hooks, "EstimatorSpec.training_chief_hooks"),
                       graph_hooks.session_hooks(spec.evaluation_hooks, "EstimatorSpec.evaluation_hooks"),
                       graph_hooks.session_hooks(spec.prediction_hooks, "EstimatorSpec.prediction_hooks"),
                       spec.export_outputs)


def _from_tpu_spec(spec: TPUEstimatorSpec) -> SessionSpec:
    scaffold = spec.scaffold_fn() if spec.scaffold_fn is not None else None
    metrics = {}
    if spec.eval_metrics is not None and spec.mode == ModeKeys.EVAL:
        with made_as_metric_variables():
            metrics = _call_with(*spec.eval_metrics)
    if metrics:  # 2.15 built an EstimatorSpec of metric_fn's dict (as_estimator_spec), with EstimatorSpec's checks
        metrics, _ = check_estimator_spec(spec.mode, None, spec.loss, None, metrics, None, None, {})
    training_hooks = graph_hooks.session_hooks(spec.training_hooks, "TPUEstimatorSpec.training_hooks")
    if spec.host_call is not None and spec.mode == ModeKeys.TRAIN:
        training_hooks.insert(0, HostCallHook(_call_with(*spec.host_call)))
    return SessionSpec(spec.mode, spec.loss, spec.train_op, spec.predictions, dict(metrics or {}),
                       scaffold or tf.compat.v1.train.Scaffold(), training_hooks, [],
                       graph_hooks.session_hooks(spec.evaluation_hooks, "TPUEstimatorSpec.evaluation_hooks"),
                       graph_hooks.session_hooks(spec.prediction_hooks, "TPUEstimatorSpec.prediction_hooks"),
                       spec.export_outputs)


def _call_with(fn: Callable, tensors: Any) -> Any:
    """fn(**tensors) for a dict, fn(*tensors) for a list or tuple: how TPUEstimator called metric_fn and host_call."""
    return fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)


class HostCallHook(tf.compat.v1.train.SessionRunHook):
    """Runs host_call's ops with every training step (TPUEstimator 2.15's CPU host call), its summary writers
    initialised when the session starts and flushed at the end."""

    def __init__(self, ops: Any):
        self._ops = ops

    def begin(self) -> None:
        self._init = summary_ops_v2.summary_writer_initializer_op()
        writers = [op.inputs[0] for op in self._init if op.inputs]  # each CreateSummaryFileWriter's resource
        self._flush = [gen_summary_ops.flush_summary_writer(writer) for writer in writers] or None

    def after_create_session(self, session, coord) -> None:
        del coord
        if self._init:
            session.run(self._init)

    def before_run(self, run_context):
        del run_context
        return tf.compat.v1.train.SessionRunArgs(self._ops) if self._ops is not None else None

    def end(self, session) -> None:
        if self._flush is not None:
            session.run(self._flush)
