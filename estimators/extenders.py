"""`add_metrics(estimator, metric_fn)`: a copy of an estimator whose evaluate() also reports metric_fn's metrics.

As tf.estimator.add_metrics: metric_fn takes any of `features`, `labels`, `predictions`, `config` by
name and returns {name: metric} (Keras metrics it updated, or tf.compat.v1.metrics pairs); its
metrics are added to model_fn's, replacing any of the same name. On an Estimator they join
EstimatorSpec.eval_metric_ops. On a TPUEstimator they run on the host with the spec's own
eval_metrics, on the real rows only (eval_metric_ops would see a static-shape batch's padding).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from estimators.canned.estimator_base import CannedEstimator
from estimators.compat.fn_args import model_fn_args
from estimators.estimator import Estimator
from estimators.mode_keys import ModeKeys
from estimators.specs import EstimatorSpec, TPUEstimatorSpec
from estimators.tpu.estimator import TPUEstimator

_METRIC_FN_ARGS = ("features", "labels", "predictions", "config")


def _metric_fn_args(metric_fn: Callable) -> tuple[str, ...]:
    if not callable(metric_fn):
        raise ValueError(f"metric_fn must be callable, got {type(metric_fn).__name__}.")
    names = [p.name for p in inspect.signature(metric_fn).parameters.values()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    unexpected = [name for name in names if name not in _METRIC_FN_ARGS]
    if unexpected:
        raise ValueError(
            f"metric_fn has arguments {unexpected} that add_metrics cannot fill; it may take any of "
            f"{', '.join(_METRIC_FN_ARGS)} (by name)."
        )
    return tuple(names)


def _call_model_fn(estimator: Estimator, features: Any, labels: Any, mode: str, params: dict, config: Any) -> Any:
    values = {"features": features, "labels": labels, "mode": mode, "params": params, "config": config}
    model_fn = estimator.model_fn
    return model_fn(**{name: values[name] for name in model_fn_args(model_fn)})


def _host_metric_fn(spec: TPUEstimatorSpec, added: Callable, args: tuple[str, ...], features: Any, labels: Any,
                    config: Any) -> tuple[Callable, dict]:
    """(metric_fn, tensors) running spec's eval_metrics and then `added`, on the host, on real rows."""
    inner_fn, inner_tensors = spec.eval_metrics if spec.eval_metrics is not None else (None, None)
    values = {"features": features, "labels": labels, "predictions": spec.predictions}
    tensors = {name: values[name] for name in args if name != "config" and values[name] is not None}
    if inner_fn is not None:
        tensors["inner"] = inner_tensors

    def metric_fn(**rows):
        metrics = {}
        if inner_fn is not None:
            inner = rows.pop("inner")
            metrics.update(inner_fn(**inner) if isinstance(inner, dict) else inner_fn(*inner))
        kwargs = {name: rows.get(name) for name in args if name != "config"}
        if "config" in args:
            kwargs["config"] = config
        metrics.update(added(**kwargs))
        return metrics

    return metric_fn, tensors


def add_metrics(estimator: Estimator, metric_fn: Callable) -> Estimator:
    """A new estimator of the same kind, model_dir, config and params whose evaluation adds metric_fn's metrics."""
    if not isinstance(estimator, Estimator):
        raise ValueError(f"add_metrics needs an estimators.Estimator or TPUEstimator, got {type(estimator).__name__}.")
    args = _metric_fn_args(metric_fn)

    def model_fn(features, labels, mode, params, config):
        spec = _call_model_fn(estimator, features, labels, mode, params, config)
        if mode != ModeKeys.EVAL:
            return spec
        if isinstance(spec, TPUEstimatorSpec):
            return spec._replace(eval_metrics=_host_metric_fn(spec, metric_fn, args, features, labels, config))
        if isinstance(spec, EstimatorSpec):
            values = {"features": features, "labels": labels, "predictions": spec.predictions, "config": config}
            metrics = dict(spec.eval_metric_ops or {})
            metrics.update(metric_fn(**{name: values[name] for name in args}))
            return spec._replace(eval_metric_ops=metrics)
        return spec  # not a spec: the engine's own check names the problem

    return _same_kind(estimator, model_fn)


_RESERVED_PARAMS = ("batch_size", "use_tpu", "context")  # TPUEstimator sets these itself


def _same_kind(estimator: Estimator, model_fn: Callable) -> Estimator:
    """An estimator like `estimator` (class, model_dir, config, params, warm start, batch sizes) with model_fn."""
    common = dict(model_dir=estimator.model_dir, config=estimator.config, params=estimator.params,
                  warm_start_from=estimator._warm_start)  # noqa: SLF001
    if isinstance(estimator, TPUEstimator):
        sizes = estimator._batch_sizes  # noqa: SLF001
        params = {k: v for k, v in common.pop("params").items() if k not in _RESERVED_PARAMS}
        return type(estimator)(
            model_fn, params=params, use_tpu=estimator._use_tpu, eval_on_tpu=estimator._eval_on_tpu,  # noqa: SLF001
            train_batch_size=sizes[ModeKeys.TRAIN], eval_batch_size=sizes[ModeKeys.EVAL],
            predict_batch_size=sizes[ModeKeys.PREDICT], **common)
    if isinstance(estimator, CannedEstimator):  # their constructors take columns and heads, not a model_fn
        return CannedEstimator(model_fn, estimator.model_dir, estimator.config, estimator._warm_start)  # noqa: SLF001
    return type(estimator)(model_fn, **common)
