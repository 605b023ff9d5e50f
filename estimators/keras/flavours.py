"""What differs between a Keras 3 model and a tf_keras (Keras 2) one for model_to_estimator.

tf.estimator 2.15's model_to_estimator took Keras 2 models (`tf.keras` then; `tf_keras` now, or
`tf.keras` under TF_USE_LEGACY_KERAS=1). A model is rebuilt, compiled, and its loss and metrics
computed with its own Keras: a Keras 2 model by Keras 2's LossesContainer and MetricsContainer (the
code behind its compile()), so its loss, regularization and metric names are Keras 2's. Both
divide a reduced loss by the replica count (tf_keras in scale_loss_for_distribution, also for
regularization losses and for a loss function returning one value per batch), so both update with
the replicas' gradients summed. tf_keras is imported only when a model is one of its models.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import keras
import tensorflow as tf

from estimators.graph.metric_variables import made_as_metric_variables


def _tf_keras() -> Any:
    return sys.modules.get("tf_keras")


def is_tf_keras_model(model: Any) -> bool:
    """A tf_keras (Keras 2) model: tf_keras is loaded (a model of it exists only then) and model is one."""
    module = _tf_keras()
    return module is not None and isinstance(model, module.Model)


@dataclass(frozen=True)
class Flavour:
    """One Keras's ways to (de)serialize, check, compile and score a model."""

    name: str  # "Keras 3" / "tf_keras (Keras 2)"

    @property
    def module(self) -> Any:
        return keras if self.name == KERAS3.name else _tf_keras()

    @property
    def is_keras3(self) -> bool:
        return self.name == KERAS3.name

    @contextlib.contextmanager
    def tf2_layers(self) -> Iterator[None]:
        """Within the block tf_keras builds its TF2 layers in the export graph as in a tf.function.

        tf_keras builds TF1 layers in any graph named wrapped_function* (tf.compat.v1.wrap_function's,
        where the export traces model_fn), and those cannot rebuild a Keras 2 model from its config
        (its KerasTensors recurse without end). That graph is a TF2 function graph, where tf_keras's
        TF2 layers run as in model_fn's tf.function; so it is renamed while the model is built and called.
        """
        graph = tf.compat.v1.get_default_graph()
        name = getattr(graph, "name", None)
        if self.is_keras3 or not isinstance(name, str) or not name.startswith("wrapped_function"):
            yield
            return
        graph.name = f"estimators_{name}"
        try:
            yield
        finally:
            graph.name = name

    def serialize(self, obj: Any) -> dict:
        return self.module.saving.serialize_keras_object(obj)

    def deserialize(self, config: Any, custom_objects: dict) -> Any:
        """A fresh object from its serialized config (Keras consumes the config it is given: a copy goes in).

        Outside Keras's safe mode: the config is the program's own model, serialized in this process (a model
        loaded from a file passed load_model's safe mode first), so a Lambda layer's Python lambda is rebuilt
        as 2.15's clone of the model rebuilt it.
        """
        return self.module.saving.deserialize_keras_object(copy.deepcopy(config), custom_objects=custom_objects,
                                                           safe_mode=False)

    def is_compiled(self, model: Any) -> bool:
        flag = getattr(model, "compiled", None) if self.is_keras3 else getattr(model, "_is_compiled", None)
        return bool(flag) and getattr(model, "optimizer", None) is not None and getattr(model, "loss", None) is not None

    def optimizer_problem(self, optimizer: Any) -> str | None:
        """Why `optimizer` cannot train the estimator, or None."""
        if self.is_keras3:
            bases: tuple = (keras.optimizers.Optimizer,)
            loss_scale = keras.optimizers.LossScaleOptimizer
        else:
            bases = (self.module.optimizers.Optimizer, self.module.optimizers.legacy.Optimizer)
            loss_scale = self.module.mixed_precision.LossScaleOptimizer
        if not isinstance(optimizer, bases):
            return f"The Keras model's optimizer must be a {self.name} optimizer, got {type(optimizer).__name__}."
        if isinstance(optimizer, loss_scale):
            return ("A LossScaleOptimizer (mixed_float16 loss scaling) is not supported by model_to_estimator: "
                    "use the 'mixed_bfloat16' policy (no loss scaling, what TPUs use) or float32, and compile "
                    "with auto_scale_loss=False.")
        return None

    def compute_loss(self, model: Any, compiled: dict, inputs: Any, targets: Any, outputs: Any,
                     sample_weight: Any, optimizer: Any, training: bool) -> Any:
        """The compiled loss of this batch (with regularization), divided by the replica count as Keras does."""
        if self.is_keras3:
            with made_as_metric_variables():  # compile()'s loss tracker: evaluation state, never checkpointed
                model.compile(optimizer=optimizer, loss=compiled["loss"], loss_weights=compiled["loss_weights"],
                              jit_compile=False, auto_scale_loss=False)
            return model.compute_loss(x=inputs, y=targets, y_pred=outputs, sample_weight=sample_weight,
                                      training=training)
        losses = _tf_keras_losses_container()(compiled["loss"], compiled["loss_weights"],
                                              output_names=list(model.output_names or []) or None,
                                              total_loss_mean=_NoLossTracker())
        return losses(targets, outputs, sample_weight, regularization_losses=model.losses)

    def outside_functions_only(self, model: Any) -> set[int]:
        """ids of the variables building `model` made that a build inside tf.function (model_fn) does not make.

        tf_keras gives every Model fit/evaluate/predict step counters, made only outside functions.
        """
        if self.is_keras3:
            return set()
        found = set()
        for module in [model, *getattr(model, "submodules", ())]:
            for attribute in ("_train_counter", "_test_counter", "_predict_counter"):
                variable = vars(module).get(attribute)
                if variable is not None:
                    found.add(id(variable))
        return found

    def scale_loss(self, optimizer: Any, loss: Any) -> Any:
        return optimizer.scale_loss(loss) if self.is_keras3 else loss

    def compiled_metrics(self, compiled: dict, output_names: list | None, y_true: Any, y_pred: Any,
                         sample_weight: Any) -> dict:
        """{name model.evaluate() reports: metric updated with this batch} for the compiled metrics."""
        if self.is_keras3:
            try:  # Keras's own compiled-metrics container: the names and metric classes model.evaluate() uses
                from keras.src.trainers.compile_utils import CompileMetrics
            except ImportError as err:  # pragma: no cover - a Keras 3 release that moved it
                raise ImportError(
                    f"This Keras ({keras.__version__}) has no keras.src.trainers.compile_utils.CompileMetrics, "
                    "which model_to_estimator uses to evaluate compiled metrics.") from err
            container = CompileMetrics(compiled["metrics"], compiled["weighted_metrics"], output_names=output_names)
            container.update_state(y_true, y_pred, sample_weight)
            names = list(container.result())
            if len(names) != len(container.metrics):
                raise RuntimeError(f"Could not name Keras's compiled metrics: {names} for {container.metrics}.")
            return dict(zip(names, container.metrics, strict=True))
        from tf_keras.src.engine import compile_utils

        container = compile_utils.MetricsContainer(compiled["metrics"], compiled["weighted_metrics"],
                                                   output_names=output_names)
        container.update_state(y_true, y_pred, sample_weight)
        return {metric.name: metric for metric in container.metrics}


class _NoLossTracker:
    """Stands in for compile()'s running mean of the loss (model.evaluate()'s "loss"): the engine averages
    the loss itself, and the tracker's variables would be model_fn state named like the metrics' (`total`)."""

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        return None

    def reset_state(self) -> None:
        return None


@functools.cache
def _tf_keras_losses_container() -> type:
    """tf_keras's LossesContainer (what compile() builds for model.compiled_loss) without per-output loss trackers."""
    from tf_keras.src.engine import compile_utils

    class LossesContainer(compile_utils.LossesContainer):
        def _create_metrics(self) -> None:
            self._per_output_metrics = [None] * len(self._losses)

    return LossesContainer


KERAS3 = Flavour("Keras 3")
TF_KERAS = Flavour("tf_keras (Keras 2)")


def flavour_of(model: Any) -> Flavour | None:
    """The Keras `model` belongs to, or None when it is no Keras model."""
    if isinstance(model, keras.Model):
        return KERAS3
    if is_tf_keras_model(model):
        return TF_KERAS
    return None
