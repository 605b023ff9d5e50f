"""MultiHead: several named heads on one logits tensor (split along its last axis) or a dict of logits; labels a
dict by head name; the losses added (optionally weighted), predictions and export signatures merged (2.15:
tf.estimator.MultiHead)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from estimators.canned.heads import base, keys
from estimators.canned.heads import metrics as head_metrics
from estimators.canned.metric_keys import MetricKeys as MK
from estimators.export.outputs import PredictOutput
from estimators.mode_keys import ModeKeys
from estimators.specs import EstimatorSpec


def _no_op_train_fn(loss: tf.Tensor) -> tf.Operation:
    del loss
    return tf.no_op()


def _default_export_output(export_outputs: dict, head_name: str) -> Any:
    """The first head's default signature: its only export output, or its serving_default one."""
    if len(export_outputs) == 1:
        return next(iter(export_outputs.values()))
    if keys.SERVING_DEFAULT not in export_outputs:
        raise ValueError(f"{head_name} did not specify default export_outputs. Given: {export_outputs} Suggested "
                         f"fix: Use one of the heads in tf.estimator, or include key {keys.SERVING_DEFAULT} in "
                         f"export_outputs.")
    return export_outputs[keys.SERVING_DEFAULT]


class MultiHead(base.Head):
    """Heads, each with a name, trained together; `head_weights` weight their losses in the sum."""

    def __init__(self, heads: Sequence[base.Head], head_weights: Sequence[float] | None = None):
        if not heads:
            raise ValueError(f"Must specify heads. Given: {heads}")
        if head_weights and len(head_weights) != len(heads):
            raise ValueError(f"heads and head_weights must have the same size. Given len(heads): {len(heads)}. "
                             f"Given len(head_weights): {len(head_weights)}.")
        for head in heads:
            if head.name is None:
                raise ValueError(f"All given heads must have name specified. Given: {head}")
        self._heads = tuple(heads)
        self._head_weights = tuple(head_weights) if head_weights else ()
        self._logits_dimension = sum(head.logits_dimension for head in self._heads)
        self._loss_keys = tuple(f"{MK.LOSS}/{head.name}" for head in self._heads)

    @property
    def name(self) -> str:
        return "_".join(head.name for head in self._heads)

    @property
    def logits_dimension(self) -> int:
        return self._logits_dimension

    @property
    def loss_reduction(self) -> Any:
        reductions = [head.loss_reduction for head in self._heads]
        if len(set(reductions)) > 1:
            raise ValueError(f"The loss_reduction must be the same for different heads. Given: {reductions}")
        return reductions[0]

    def _split_logits(self, logits: Any) -> dict:
        """The heads' slices of the last axis, in order, by head name."""
        with tf.name_scope("split_logits"):
            logits = tf.convert_to_tensor(logits)
            dimensions = [head.logits_dimension for head in self._heads]
            shape = logits.shape.as_list()
            if shape[-1] is not None and shape[-1] != sum(dimensions):
                raise ValueError(f"Could not split logits of shape {shape!r} among the heads with individual logits "
                                 f"dimensions: {dimensions!r}. The last dimension of the logits tensor should equal "
                                 f"{shape[-1]} but is {sum(dimensions)}.")
            batch_shape = tf.shape(logits)[:-1]
            zeros, minus_ones = tf.zeros_like(batch_shape), -1 * tf.ones_like(batch_shape)
            result, begin = {}, 0
            for head in self._heads:
                result[head.name] = tf.slice(logits, begin=tf.concat([zeros, [begin]], axis=0),
                                             size=tf.concat([minus_ones, [head.logits_dimension]], axis=0))
                begin += head.logits_dimension
        return result

    def _check_logits_and_labels(self, logits: Any, labels: Any = None) -> dict:
        names = [head.name for head in self._heads]
        if isinstance(logits, dict):
            missing = list(set(names) - set(logits))
            if missing:
                raise ValueError(f"logits has missing values for head(s): {missing}")
            logits_dict = logits
        else:
            logits_dict = self._split_logits(logits)
        if labels is not None:
            if not isinstance(labels, dict):
                raise ValueError(f"labels must be a dict. Given: {labels}")
            missing = list(set(names) - set(labels))
            if missing:
                raise ValueError(f"labels has missing values for head(s): {missing}")
        return logits_dict

    def loss(self, labels: Any, logits: Any, features: dict | None = None, mode: str | None = None,
             regularization_losses: Any = None) -> tf.Tensor:
        """The sum of the heads' training losses (each times its head weight), plus the regularization losses."""
        logits_dict = self._check_logits_and_labels(logits, labels)
        losses = [head.loss(logits=logits_dict[head.name], labels=labels[head.name], features=features, mode=mode)
                  for head in self._heads]
        with tf.name_scope("merge_losses"):
            if self._head_weights:
                losses = [tf.math.multiply(loss, weight) for loss, weight in
                          zip(losses, self._head_weights, strict=True)]
            return base.regularized(tf.math.add_n(losses), regularization_losses)

    def predictions(self, logits: Any, keys: Any = None) -> dict:  # noqa: A002 - 2.15's name
        """Every head's predictions, keyed by (head name, prediction key)."""
        del keys
        logits_dict = self._check_logits_and_labels(logits)
        result = {}
        with tf.name_scope("merge_pred"):
            for head in self._heads:
                for key, value in head.predictions(logits=logits_dict[head.name]).items():
                    result[(head.name, key)] = value
        return result

    def metrics(self, regularization_losses: Any = None) -> dict:
        """The mean of each head's training loss (loss/<head name>), and the regularization loss's mean."""
        m = head_metrics.keras_metrics()
        result = {}
        if regularization_losses is not None:
            result[self._summary_key(MK.LOSS_REGULARIZATION)] = m.Mean(name=MK.LOSS_REGULARIZATION)
        with tf.name_scope("merge_eval"):
            for loss_key in self._loss_keys:
                result[loss_key] = m.Mean(name=loss_key)
        return result

    def update_metrics(self, eval_metrics: dict, features: dict, logits: Any, labels: Any,
                       regularization_losses: Any = None) -> dict:
        """Updates the loss means, and adds each head's own updated metrics."""
        logits_dict = self._check_logits_and_labels(logits, labels)
        head_metrics.add_regularization(eval_metrics, self._summary_key(MK.LOSS_REGULARIZATION),
                                        regularization_losses)
        for head, loss_key in zip(self._heads, self._loss_keys, strict=True):
            head_logits, head_labels = logits_dict[head.name], labels[head.name]
            eval_metrics[loss_key].update_state(values=head.loss(logits=head_logits, labels=head_labels,
                                                                 features=features))
            eval_metrics.update(head.update_metrics(head.metrics(), features, head_logits, head_labels) or {})
        return eval_metrics

    def create_estimator_spec(self, features: dict, mode: str, logits: Any, labels: Any = None,
                              optimizer: Any = None, trainable_variables: Any = None,
                              train_op_fn: Callable | None = None, update_ops: Any = None,
                              regularization_losses: Any = None) -> EstimatorSpec:
        """The merged EstimatorSpec: every head's spec is built (for its export outputs), then the merged
        predictions, the summed loss, the merged metrics and one train op."""
        with tf.compat.v1.name_scope(self.name, "multi_head"):
            logits_dict = self._check_logits_and_labels(logits, labels)
            specs = [head.create_estimator_spec(features=features, mode=mode, logits=logits_dict[head.name],
                                                labels=labels[head.name] if labels else None,
                                                train_op_fn=_no_op_train_fn)
                     for head in self._heads]
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(ModeKeys.PREDICT, predictions=predictions,
                                     export_outputs=self._merge_predict_export_outputs(specs))
            loss = self.loss(labels, logits, features, mode, regularization_losses)
            if mode == ModeKeys.EVAL:
                eval_metrics = self.update_metrics(self.metrics(regularization_losses=regularization_losses),
                                                   features, logits, labels,
                                                   regularization_losses=regularization_losses)
                return EstimatorSpec(ModeKeys.EVAL, predictions=predictions, loss=loss, eval_metric_ops=eval_metrics)
            if mode != ModeKeys.TRAIN:
                raise ValueError(f"mode={mode} unrecognized")
            train_op = base.create_estimator_spec_train_op(self.name, optimizer, trainable_variables, train_op_fn,
                                                           update_ops, loss, self.loss_reduction)
            base.create_estimator_spec_summary(loss, regularization_losses)
            eval_metrics = {}
            for spec in specs:
                eval_metrics.update(spec.eval_metric_ops or {})
            return EstimatorSpec(ModeKeys.TRAIN, predictions=predictions, loss=loss, train_op=train_op,
                                 eval_metric_ops=eval_metrics)

    def _merge_predict_export_outputs(self, specs: list) -> dict:
        """The first head's default signature as serving_default, every head's signatures under
        '<head name>[/<key>]', and one 'predict' signature with every head's predict outputs."""
        outputs = {keys.SERVING_DEFAULT: _default_export_output(specs[0].export_outputs, self._heads[0].name)}
        merged_predict = {}
        for head, spec in zip(self._heads, specs, strict=True):
            for key, output in spec.export_outputs.items():
                outputs[head.name if key == keys.SERVING_DEFAULT else f"{head.name}/{key}"] = output
                if key == keys.PREDICT and isinstance(output, PredictOutput):
                    for name, tensor in output.outputs.items():
                        merged_predict[f"{head.name}/{name}"] = tensor
        outputs[keys.PREDICT] = PredictOutput(merged_predict)
        return outputs
