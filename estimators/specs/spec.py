"""What a model_fn returns: EstimatorSpec and TPUEstimatorSpec, with tf.estimator's field names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import tensorflow as tf

from estimators import log as logging
from estimators import path_choice
from estimators.mode_keys import ModeKeys
from estimators.specs import checks as spec_checks
from estimators.training.hooks import Hook, checked_hooks
from estimators.training.host_call import validate_host_call

LOSS_METRIC_KEY = "loss"  # evaluate()'s key for the mean loss (2.15's model_fn.LOSS_METRIC_KEY)
AVERAGE_LOSS_METRIC_KEY = "average_loss"  # 2.15's canned heads' key for the mean per-example loss


class _EstimatorSpecFields(NamedTuple):

    mode: str
    predictions: Any = None
    loss: Any = None
    train_op: Any = None
    eval_metric_ops: dict | None = None
    export_outputs: dict | None = None
    training_chief_hooks: tuple = ()
    training_hooks: tuple = ()
    scaffold: Any = None
    evaluation_hooks: tuple = ()
    prediction_hooks: tuple = ()


class EstimatorSpec(_EstimatorSpecFields):
    """The ops a model_fn returns for `mode` (tf.estimator.EstimatorSpec's fields), checked when built, as 2.15
    checked them (specs/checks.py): a wrong field fails in model_fn, at the line that made the spec.

    `eval_metric_ops` maps names to tf.compat.v1.metrics (value, update_op) pairs or Keras metrics that model_fn
    updated itself. Scaffolds and SessionRunHooks put the model_fn on the graph path (estimators/graph/); a spec
    built without a scaffold holds an empty Scaffold, as 2.15's did, which puts nothing there.
    In PREDICT mode `export_outputs` holds the default serving signature, as 2.15's did: a PredictOutput of
    the predictions when none is given, the only one when there is one. `_replace` checks the new spec again.
    """

    __slots__ = ()

    def __new__(cls, mode: str, predictions: Any = None, loss: Any = None, train_op: Any = None,
                eval_metric_ops: dict | None = None, export_outputs: dict | None = None,
                training_chief_hooks: Any = (), training_hooks: Any = (), scaffold: Any = None,
                evaluation_hooks: Any = (), prediction_hooks: Any = ()):
        hooks = {"training_chief_hooks": training_chief_hooks, "training_hooks": training_hooks,
                 "evaluation_hooks": evaluation_hooks, "prediction_hooks": prediction_hooks}
        eval_metric_ops, export_outputs = spec_checks.check_estimator_spec(
            mode, predictions, loss, train_op, eval_metric_ops, export_outputs, scaffold, hooks)
        if scaffold is None:  # 2.15 gave every spec a Scaffold; this one keeps the program on its path
            scaffold = path_choice.default_scaffold()
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops, export_outputs,
                               tuple(training_chief_hooks or ()), tuple(training_hooks or ()), scaffold,
                               tuple(evaluation_hooks or ()), tuple(prediction_hooks or ()))

    def _replace(self, **changes: Any) -> EstimatorSpec:
        """A new spec with `changes`, checked again as a new spec is; its mode cannot change (2.15's rule)."""
        if "mode" in changes and changes["mode"] != self.mode:
            raise ValueError(f"mode of EstimatorSpec cannot be changed: it is {self.mode!r}, got {changes['mode']!r}; "
                             f"build a new EstimatorSpec for another mode.")
        return type(self)(**{**self._asdict(), **changes})


class TPUEstimatorSpec(NamedTuple):
    """The ops a TPU model_fn returns (tf.estimator.tpu.TPUEstimatorSpec's fields).

    `eval_metrics` is `(metric_fn, tensors)`: the engine gathers `tensors` from every replica,
    drops padding, and calls `metric_fn` once per step on the host with the real examples.
    """

    mode: str
    predictions: Any = None
    loss: Any = None
    train_op: Any = None
    eval_metrics: tuple[Callable, Any] | None = None
    export_outputs: dict | None = None
    scaffold_fn: Callable | None = None
    host_call: Any = None
    training_hooks: tuple | None = None
    evaluation_hooks: tuple | None = None
    prediction_hooks: tuple | None = None

    def as_estimator_spec(self) -> EstimatorSpec:
        """The EstimatorSpec 2.15 made of it off the TPU: metric_fn(**tensors) as its eval_metric_ops."""
        metrics = None
        if self.eval_metrics:
            metric_fn, tensors = self.eval_metrics
            metrics = metric_fn(**tensors) if isinstance(tensors, dict) else metric_fn(*tensors)
        return EstimatorSpec(mode=self.mode, predictions=self.predictions, loss=self.loss, train_op=self.train_op,
                             eval_metric_ops=metrics, export_outputs=self.export_outputs,
                             training_hooks=self.training_hooks, evaluation_hooks=self.evaluation_hooks,
                             prediction_hooks=self.prediction_hooks)


_TPUEstimatorSpec = TPUEstimatorSpec  # 2.15's model_fn._TPUEstimatorSpec, which canned heads' tests build

_UNSUPPORTED = {
    "evaluation_hooks": "hooks for evaluate(), which runs no hooks (hooks are called between training loops)",
    "prediction_hooks": "hooks for predict(), which runs no hooks (hooks are called between training loops)",
    "scaffold": "a tf.compat.v1 Scaffold (sessions); warm starts go in warm_start_from=WarmStartSettings(...)",
    "scaffold_fn": "a tf.compat.v1 Scaffold (sessions); warm starts go in warm_start_from=WarmStartSettings(...)",
}


def validate_spec(spec: Any, mode: str, sessions: bool = False) -> EstimatorSpec | TPUEstimatorSpec:
    """Checks what model_fn returned for `mode`; raises ValueError that says what is missing.

    sessions: the spec runs on the graph path, where Scaffolds and SessionRunHooks have their TF1 meaning.
    """
    if not isinstance(spec, (EstimatorSpec, TPUEstimatorSpec)):
        raise ValueError(
            f"model_fn should return an EstimatorSpec or TPUEstimatorSpec, got {type(spec).__name__}."
        )
    if spec.mode != mode:  # 2.15 ran such a spec as the call's mode (mode=None is common in its tests)
        logging.log_first_n(logging.WARNING if spec.mode is not None else logging.DEBUG,
                            "model_fn was called with mode=%r but returned a spec with mode=%r; it runs as %r.", 1,
                            mode, spec.mode, mode)
    for name, what in () if sessions else _UNSUPPORTED.items():
        value = getattr(spec, name, None)
        if path_choice.user_scaffold(value) if name == "scaffold" else value:
            raise ValueError(f"{type(spec).__name__}.{name} holds {what}; remove it.")
    for name in () if sessions else ("training_hooks", "training_chief_hooks"):
        checked_hooks(getattr(spec, name, None), f"{type(spec).__name__}.{name}", Hook)
    if mode == ModeKeys.TRAIN:
        if spec.loss is None:
            raise ValueError("model_fn returned no loss in TRAIN mode; set loss= in the returned spec.")
        if spec.train_op is None:
            raise ValueError(
                "model_fn returned no train_op in TRAIN mode; return "
                "train_op=CrossShardOptimizer(optimizer).minimize(loss)."
            )
    if mode == ModeKeys.EVAL and spec.loss is None:
        raise ValueError("model_fn returned no loss in EVAL mode; set loss= in the returned spec.")
    if mode == ModeKeys.PREDICT and spec.predictions is None:
        raise ValueError("model_fn returned no predictions in PREDICT mode; set predictions= in the spec.")
    loss_shape = getattr(spec.loss, "shape", None)
    if loss_shape is not None and tf.TensorShape(loss_shape).num_elements() not in (None, 1):
        raise ValueError(
            f"model_fn's loss must be a scalar (the mean over this replica's batch), got shape {spec.loss.shape}."
        )  # tf.estimator took any one-element loss ([1], [1, 1]) as that scalar
    if isinstance(spec, TPUEstimatorSpec) and spec.host_call is not None:
        validate_host_call(spec.host_call)
    if isinstance(spec, TPUEstimatorSpec) and spec.eval_metrics is not None:
        metrics = spec.eval_metrics
        if not (isinstance(metrics, (tuple, list)) and len(metrics) == 2 and callable(metrics[0])):
            raise ValueError("TPUEstimatorSpec.eval_metrics must be a tuple (metric_fn, tensors).")
    return spec
