"""A TPUEstimator-style model_fn/input_fn framework on TensorFlow >= 2.16 and tf.distribute.

The public names load on first use (PEP 562), so `import estimators` costs nothing and the modules
that need no TensorFlow (estimators.training.iterations, estimators.log) import without starting it:
main.py checks its flags with them before TensorFlow is imported. Reaching a public name
(`estimators.Estimator`, `from estimators import RunConfig`) first checks TensorFlow >= 2.16
(estimators/_tf_check.py), as importing the package did; when TensorFlow is already imported the
check runs at once, costing nothing.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from estimators._tf_check import require_tensorflow

# Where each public name lives; the two subpackages are public names too.
_MODULES: dict[str, tuple[str, ...]] = {
    "estimators.canned": (
        "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BinaryClassHead", "DNNClassifier",
        "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor",
        "DNNRegressor", "Head", "LinearClassifier", "LinearEstimator", "LinearRegressor", "MultiClassHead",
        "MultiLabelHead", "PoissonRegressionHead", "RegressionHead", "classifier_parse_example_spec",
        "regressor_parse_example_spec",
    ),
    "estimators.checkpoint.warm_start": ("WarmStartSettings",),
    "estimators.cross_shard_optimizer": ("CrossShardOptimizer",),
    "estimators.estimator": ("Estimator",),
    "estimators.export.exporters": ("BestExporter", "Exporter", "FinalExporter", "LatestExporter"),
    "estimators.export.outputs": ("EvalOutput",),
    "estimators.extenders": ("add_metrics",),
    "estimators.keras_model": ("model_to_estimator",),
    "estimators.logit_fn": ("call_logit_fn",),
    "estimators.mode_keys": ("ModeKeys",),
    "estimators.preflight": ("preflight",),
    "estimators.run_config": ("InputPipelineConfig", "RunConfig", "TPUConfig"),
    "estimators.specs": ("EstimatorSpec", "TPUEstimatorSpec"),
    "estimators.tpu_estimator": ("TPUEstimator",),
    "estimators.training.hooks": ("Hook", "SavingListener", "StopAtStepHook"),
    "estimators.training.logging_hook": ("LoggingTensorHook",),
    "estimators.training.preemption": ("EvaluationInterrupted", "TrainingInterrupted"),
    "estimators.training.train_and_evaluate": ("EvalSpec", "TrainSpec", "train_and_evaluate"),
}
_SUBPACKAGES = ("experimental", "inputs")
_SOURCES = {name: module for module, names in _MODULES.items() for name in names}
# tf.compat.v1.train's session hooks and helpers, as tf.estimator re-exported them. They run on the
# graph-and-session path (estimators/graph/); LoggingTensorHook and StopAtStepHook above are the
# engine's own, which both paths take.
_V1_TRAIN = (
    "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "CheckpointSaverHook",
    "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "NanTensorHook", "ProfilerHook",
    "SecondOrStepTimer", "StepCounterHook", "SummarySaverHook", "NanLossDuringTrainingError", "VocabInfo",
)

__all__ = [
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BinaryClassHead", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor",
    "DNNRegressor", "Head", "LinearClassifier", "LinearEstimator", "LinearRegressor", "MultiClassHead",
    "MultiLabelHead", "PoissonRegressionHead", "RegressionHead", "classifier_parse_example_spec",
    "regressor_parse_example_spec",
    "BestExporter", "CheckpointSaverHook", "CheckpointSaverListener", "CrossShardOptimizer", "Estimator",
    "EstimatorSpec", "EvalOutput", "EvalSpec", "EvaluationInterrupted", "Exporter", "FeedFnHook", "FinalExporter",
    "FinalOpsHook",
    "GlobalStepWaiterHook", "Hook", "InputPipelineConfig", "LatestExporter", "LoggingTensorHook", "ModeKeys",
    "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "RunConfig", "SavingListener", "SecondOrStepTimer",
    "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec", "TrainSpec", "TrainingInterrupted",
    "VocabInfo", "WarmStartSettings", "add_metrics", "call_logit_fn", "experimental", "inputs", "model_to_estimator",
    "preflight", "train_and_evaluate",
]


if "tensorflow" in sys.modules:  # a program that imported TensorFlow first learns of a wrong version at once
    require_tensorflow()


def __getattr__(name: str) -> Any:
    """Loads a public name on first use (checking TensorFlow first), or a submodule (`estimators.export`)."""
    if name in _SOURCES or name in _V1_TRAIN or name in _SUBPACKAGES:
        require_tensorflow()
        if name in _V1_TRAIN:
            import tensorflow as tf

            value = getattr(tf.compat.v1.train, name)
        elif name in _SUBPACKAGES:
            value = importlib.import_module(f"{__name__}.{name}")
        else:
            value = getattr(importlib.import_module(_SOURCES[name]), name)
    else:  # not public: a submodule, whose own imports decide whether TensorFlow starts
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """`estimators.preflight` stays the function, as when this package imported everything at once: importing
    the subpackage of that name (estimators.preflight.check, ...) would otherwise set it to the module."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "preflight" and isinstance(value, types.ModuleType):
            return  # the subpackage stays in sys.modules["estimators.preflight"]
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
