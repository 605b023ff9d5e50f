"""Export outputs: what one serving signature returns (tf.estimator.export's ExportOutput classes).

A model_fn puts them in `EstimatorSpec(export_outputs={signature name: ExportOutput})`. Each one
says, given the receiver tensors, which inputs and outputs its signature has and which TensorFlow
Serving method (predict, classify, regress) it serves; a ValueError there means the signature
cannot be served and is left out of the export, as tf.estimator did.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import tensorflow as tf

_SEPARATOR = "/"


class SignatureParts(NamedTuple):
    """One signature: {name: input tensor}, {name: output tensor}, and its method name."""

    inputs: dict
    outputs: dict
    method_name: str


class ExportOutput:
    """Base class of the outputs a serving signature can return."""

    def signature(self, receiver_tensors: dict) -> SignatureParts:
        """This output's signature over `receiver_tensors`; ValueError if it cannot be served."""
        raise NotImplementedError

    @staticmethod
    def _key(key: Any, label: str) -> str:
        if isinstance(key, tuple):  # multi-head models name outputs by tuples of strings
            key = _SEPARATOR.join(key) if all(isinstance(part, str) for part in key) else key
        if not isinstance(key, str):
            raise ValueError(f"{label} output key must be a string; got {key!r}.")
        return key

    @classmethod
    def _wrap_outputs(cls, outputs: Any, default_key: str, label: str) -> dict:
        if not isinstance(outputs, dict):
            outputs = {default_key: outputs}
        checked = {}
        for key, value in outputs.items():
            key = cls._key(key, label)
            if not isinstance(value, tf.Tensor):
                raise ValueError(f"{label} output value must be a Tensor; got {value!r}.")
            checked[key] = value
        return checked


def _single_string_input(receiver_tensors: dict, kind: str) -> tf.Tensor:
    """The one string tensor a classify or regress signature takes (serialized tf.Examples)."""
    values = list(receiver_tensors.values())
    if len(values) != 1 or values[0].dtype != tf.string:
        raise ValueError(
            f"{kind} signatures take a single tf.string input (serialized tf.Examples), got "
            f"{ {k: v.dtype.name for k, v in receiver_tensors.items()} }. Receive serialized examples "
            "(build_parsing_serving_input_receiver_fn) or export a PredictOutput."
        )
    return values[0]


class ClassificationOutput(ExportOutput):
    """A classification head's output: scores (float) and/or classes (string labels).

    Only scores: one score per class, in class-id order. Only classes: top-k labels in
    descending order. Both: zipped, each score belongs to the class at the same position.
    """

    def __init__(self, scores: tf.Tensor | None = None, classes: tf.Tensor | None = None):
        if scores is not None and not (isinstance(scores, tf.Tensor) and scores.dtype.is_floating):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores!r}.")
        if classes is not None and not (isinstance(classes, tf.Tensor) and classes.dtype == tf.string):
            raise ValueError(
                f"Classification classes must be a string Tensor (labels, not class ids: tf.as_string or a "
                f"vocabulary lookup); got {classes!r}."
            )
        if scores is None and classes is None:
            raise ValueError("ClassificationOutput needs scores, classes or both; got neither.")
        self._scores = scores
        self._classes = classes

    @property
    def scores(self) -> tf.Tensor | None:
        return self._scores

    @property
    def classes(self) -> tf.Tensor | None:
        return self._classes

    def signature(self, receiver_tensors: dict) -> SignatureParts:
        examples = _single_string_input(receiver_tensors, "Classification")
        outputs = {}
        if self._classes is not None:
            outputs[tf.saved_model.CLASSIFY_OUTPUT_CLASSES] = self._classes
        if self._scores is not None:
            if self._scores.dtype != tf.float32:
                raise ValueError(f"Classification scores must be float32 to be served, got {self._scores.dtype.name}.")
            outputs[tf.saved_model.CLASSIFY_OUTPUT_SCORES] = self._scores
        return SignatureParts({tf.saved_model.CLASSIFY_INPUTS: examples}, outputs,
                              tf.saved_model.CLASSIFY_METHOD_NAME)


class RegressionOutput(ExportOutput):
    """A regression head's output: one float value per example."""

    def __init__(self, value: tf.Tensor):
        if not (isinstance(value, tf.Tensor) and value.dtype.is_floating):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value!r}.")
        self._value = value

    @property
    def value(self) -> tf.Tensor:
        return self._value

    def signature(self, receiver_tensors: dict) -> SignatureParts:
        examples = _single_string_input(receiver_tensors, "Regression")
        if self._value.dtype != tf.float32:
            raise ValueError(f"Regression output must be float32 to be served, got {self._value.dtype.name}.")
        return SignatureParts({tf.saved_model.REGRESS_INPUTS: examples},
                              {tf.saved_model.REGRESS_OUTPUTS: self._value}, tf.saved_model.REGRESS_METHOD_NAME)


class PredictOutput(ExportOutput):
    """Any named outputs (a tensor, or a dict of str -> tensor) over the receiver's own inputs."""

    DEFAULT_KEY = "output"

    def __init__(self, outputs: Any):
        self._outputs = self._wrap_outputs(outputs, self.DEFAULT_KEY, "Prediction")

    @property
    def outputs(self) -> dict:
        return dict(self._outputs)

    def signature(self, receiver_tensors: dict) -> SignatureParts:
        if not receiver_tensors:
            raise ValueError("Prediction signatures need at least one input.")
        if not self._outputs:
            raise ValueError("Prediction signatures need at least one output.")
        return SignatureParts(dict(receiver_tensors), dict(self._outputs), tf.saved_model.PREDICT_METHOD_NAME)


class _SupervisedOutput(ExportOutput):
    """What a training or evaluation graph computes: loss, predictions and metrics, under prefixed keys.

    `loss` and `predictions`: a tensor or a dict of str (or tuple of str) -> tensor; `metrics`: a
    (value, update_op) pair or a dict of name -> pair, or -> a metric object with `result()` and
    exactly one entry in `updates` (tf_keras in a graph). Keys become "loss/<key>",
    "predictions/<key>", "metrics/<name>/value" and "metrics/<name>/update_op" (a key that already
    starts with its prefix keeps it), and an update Operation is exported as an empty tensor that
    runs it, as tf.estimator's EvalOutput/TrainOutput did. Such signatures are not served: a
    serving export (export_saved_model) leaves them out, as 2.15 did.
    """

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"
    METHOD_NAME = ""

    def __init__(self, loss: Any = None, predictions: Any = None, metrics: Any = None):
        self._loss = None if loss is None else self._prefixed(self._wrap_outputs(loss, self.LOSS_NAME, self.LOSS_NAME),
                                                              self.LOSS_NAME)
        self._predictions = None if predictions is None else self._prefixed(
            self._wrap_outputs(predictions, self.PREDICTIONS_NAME, self.PREDICTIONS_NAME), self.PREDICTIONS_NAME)
        self._metrics = None if metrics is None else self._wrap_metrics(metrics)

    @property
    def loss(self) -> dict | None:
        return None if self._loss is None else dict(self._loss)

    @property
    def predictions(self) -> dict | None:
        return None if self._predictions is None else dict(self._predictions)

    @property
    def metrics(self) -> dict | None:
        return None if self._metrics is None else dict(self._metrics)

    @staticmethod
    def _prefixed_key(key: str, prefix: str) -> str:
        return key if key.startswith(prefix) else f"{prefix}{_SEPARATOR}{key}"

    @classmethod
    def _prefixed(cls, outputs: dict, prefix: str) -> dict:
        return {cls._prefixed_key(key, prefix): value for key, value in outputs.items()}

    @classmethod
    def _wrap_metrics(cls, metrics: Any) -> dict:
        if not isinstance(metrics, dict):
            metrics = {cls.METRICS_NAME: metrics}
        outputs = {}
        for name, metric in metrics.items():
            key = cls._prefixed_key(cls._key(name, cls.METRICS_NAME), cls.METRICS_NAME)
            value, update = cls._metric_parts(key, metric)
            if not isinstance(value, tf.Tensor):
                raise ValueError(f"{key} output value must be a Tensor; got {value!r}.")
            if isinstance(update, tf.Operation):
                with tf.control_dependencies([update]):
                    update = tf.constant([], name="metric_op_wrapper")
            elif not isinstance(update, (tf.Tensor, tf.Variable)):
                raise ValueError(f"{key} update_op must be a Tensor or Operation; got {update!r}.")
            outputs[f"{key}{_SEPARATOR}{cls.METRIC_VALUE_SUFFIX}"] = value
            outputs[f"{key}{_SEPARATOR}{cls.METRIC_UPDATE_SUFFIX}"] = update
        return outputs

    @staticmethod
    def _metric_parts(key: str, metric: Any) -> tuple[Any, Any]:
        if isinstance(metric, tuple):
            if len(metric) != 2:
                raise ValueError(f"{key} must be a (value, update_op) pair; got {metric!r}.")
            return metric
        updates = list(getattr(metric, "updates", None) or [])
        if hasattr(metric, "result") and len(updates) == 1:
            return metric.result(), updates[0]
        raise ValueError(
            f"{key} is a {type(metric).__name__} without one update op to export (Keras 3 metrics have none); "
            "pass a (value, update_op) pair such as tf.compat.v1.metrics.mean(...) returns.")

    @property
    def outputs(self) -> dict:
        """Every output tensor by its prefixed key."""
        merged = {}
        for part in (self._loss, self._predictions, self._metrics):
            merged.update(part or {})
        return merged

    def supervised_signature(self, receiver_tensors: dict) -> SignatureParts:
        """The training/evaluation signature over `receiver_tensors` (features and labels)."""
        if not receiver_tensors:
            raise ValueError(f"{type(self).__name__} signatures need at least one input.")
        return SignatureParts(dict(receiver_tensors), self.outputs, self.METHOD_NAME)

    def signature(self, receiver_tensors: dict) -> SignatureParts:
        raise ValueError(f"a {type(self).__name__} ({self.METHOD_NAME}) is not a serving signature: TensorFlow "
                         "Serving serves predict, classify and regress signatures only.")


class TrainOutput(_SupervisedOutput):
    """A training graph's loss, predictions and metrics (tf.estimator's TrainOutput)."""

    METHOD_NAME = "tensorflow/supervised/training"


class EvalOutput(_SupervisedOutput):
    """An evaluation graph's loss, predictions and metrics (tf.estimator.export.EvalOutput)."""

    METHOD_NAME = "tensorflow/supervised/eval"
