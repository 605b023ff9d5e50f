"""EstimatorSpec's checks when it is built, as tf.estimator 2.15 made them (exception classes included).

What 2.15 refused there is refused here, in model_fn at the line that made the spec; what it accepted
(an unknown mode, a loss of shape [1]) is accepted. Keras metrics and Keras variables (a Keras optimizer's
update) are accepted too: the TF2 path's model_fns return them.
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from estimators.mode_keys import ModeKeys


class MetricNotTensorsError(AttributeError, TypeError):
    """An eval_metric_ops pair of Python values (2.15 failed with an AttributeError there; a TypeError too)."""


def check_estimator_spec(mode: str, predictions: Any, loss: Any, train_op: Any, eval_metric_ops: Any,
                         export_outputs: Any, scaffold: Any, hooks: dict) -> None:
    """Raises 2.15's ValueError / TypeError for a spec that cannot run; returns quietly otherwise."""
    if loss is None and mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
        raise ValueError(f"Missing loss: EstimatorSpec(mode={mode!r}) needs loss= (the mean over the batch).")
    if loss is not None:
        if not _is_tensor(loss):
            raise TypeError(f"loss must be Tensor, given: {loss!r}.")
        if loss.shape.rank is not None and loss.shape.num_elements() not in (None, 1):
            raise ValueError(f"Loss must be scalar, given: {loss!r}; reduce it, e.g. tf.reduce_mean(...).")
    if train_op is None and mode == ModeKeys.TRAIN:
        raise ValueError("Missing train_op: EstimatorSpec(mode=TRAIN) needs train_op=optimizer.minimize(...).")
    if train_op is not None and not all(_is_op_or_tensor(op) for op in tf.nest.flatten(train_op)):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op!r}.")
    if predictions is None and mode == ModeKeys.PREDICT:
        raise ValueError("Missing predictions: EstimatorSpec(mode=PREDICT) needs predictions= (a tensor or a dict).")
    if predictions is not None:
        values = predictions.items() if isinstance(predictions, dict) else [(None, predictions)]
        for key, value in values:
            if not _is_tensor(value):
                where = "predictions" if key is None else f"predictions[{key}]"
                raise TypeError(f"{where} must be Tensor (predictions: a Tensor or a dict of Tensors), given: "
                                f"{value!r}.")
    _check_metrics(eval_metric_ops)
    if export_outputs is not None:
        from estimators.export.outputs import ExportOutput

        if not isinstance(export_outputs, dict):
            raise TypeError(f"export_outputs must be dict, given: {export_outputs!r}.")
        if not all(isinstance(v, ExportOutput) for v in export_outputs.values()):
            raise TypeError(f"Values in export_outputs must be ExportOutput objects (estimators.export.PredictOutput, "
                            f"ClassificationOutput, RegressionOutput), given: {export_outputs!r}.")
    if scaffold is not None and not isinstance(scaffold, tf.compat.v1.train.Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold (tf.compat.v1.train.Scaffold). Given: {scaffold!r}.")
    for name, given in hooks.items():
        for hook in [given] if _is_hook(given) else list(given or ()):
            if not _is_hook(hook):
                raise TypeError(f"All hooks must be SessionRunHook instances (or estimators.Hook), given: {hook!r} "
                                f"in {name}.")


def _check_metrics(eval_metric_ops: Any) -> None:
    if eval_metric_ops is None:
        return
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops!r}.")
    for key, metric in eval_metric_ops.items():
        if _is_metric_object(metric):
            continue
        if not isinstance(metric, (tuple, list)) or len(metric) != 2:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples or Keras metrics, "
                            f"given: {metric!r} for key: {key}.")
        if not all(_is_op_or_tensor(part) for part in metric):
            raise MetricNotTensorsError(f"eval_metric_ops[{key!r}] must hold tensors or ops (as "
                                        f"tf.compat.v1.metrics return them), given: {metric!r}.")


def _is_tensor(value: Any) -> bool:
    return tf.is_tensor(value) or isinstance(value, (tf.SparseTensor, keras.Variable))


def _is_op_or_tensor(value: Any) -> bool:
    return isinstance(value, (tf.Operation, tf.Variable)) or _is_tensor(value)


def _is_metric_object(value: Any) -> bool:
    return isinstance(value, keras.metrics.Metric) or (type(value).__module__ or "").startswith("tf_keras.") and (
        hasattr(value, "result") and hasattr(value, "update_state"))


def _is_hook(value: Any) -> bool:
    from estimators.training.hooks import Hook

    return isinstance(value, (tf.compat.v1.train.SessionRunHook, Hook))
