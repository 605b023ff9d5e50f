"""A TPUEstimator-style model_fn/input_fn framework on TensorFlow >= 2.16 and tf.distribute.

The public names load on first use (PEP 562), so `import estimators` costs nothing and the modules
that need no TensorFlow (estimators.training.iterations, estimators.log) import without starting it:
main.py checks its flags with them before TensorFlow is imported. TensorFlow >= 2.16 is still checked
when the package is imported (estimators/_tf_check.py): against the imported module when TensorFlow is
already imported, else against the installed packages' metadata, so `from estimators.estimator import
Estimator` is refused with the same message on TF 2.15; reaching a public name checks the module itself.
"""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys
import types as _types

from estimators._tf_check import check_installed_version as _check_installed_version
from estimators._tf_check import require_tensorflow as _require_tensorflow

# Where each public name lives; the two subpackages are public names too.
_MODULES: dict[str, tuple[str, ...]] = {
    "estimators.canned": (
        "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BinaryClassHead", "DNNClassifier",
        "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor",
        "DNNRegressor", "Head", "LinearClassifier", "LinearEstimator", "LinearRegressor", "LogisticRegressionHead",
        "MultiClassHead", "MultiHead", "MultiLabelHead", "PoissonRegressionHead", "RegressionHead",
        "classifier_parse_example_spec", "regressor_parse_example_spec",
    ),
    "estimators.canned.boosted_trees": ("BoostedTreesClassifier", "BoostedTreesRegressor"),
    "estimators.checkpoint.warm_start": ("WarmStartSettings",),
    "estimators.tpu.cross_shard_optimizer": ("CrossShardOptimizer",),
    "estimators.estimator": ("Estimator",),
    "estimators.train_eval.exporters": ("BestExporter", "Exporter", "FinalExporter", "LatestExporter"),
    "estimators.export.outputs": ("EvalOutput",),
    "estimators.extenders": ("add_metrics",),
    "estimators.keras.model": ("model_to_estimator",),
    "estimators.experimental.logit_fn": ("call_logit_fn",),
    "estimators.mode_keys": ("ModeKeys",),
    "estimators.preflight": ("preflight",),
    "estimators.run_config": ("InputPipelineConfig", "RunConfig", "TPUConfig"),
    "estimators.specs": ("EstimatorSpec", "TPUEstimatorSpec"),
    "estimators.tpu.estimator": ("TPUEstimator",),
    "estimators.training.hooks": ("Hook", "SavingListener", "StopAtStepHook"),
    "estimators.training.logging_hook": ("LoggingTensorHook",),
    "estimators.training.preemption": ("EvaluationInterrupted", "TrainingInterrupted"),
    "estimators.train_eval.training": ("EvalSpec", "TrainSpec", "train_and_evaluate"),
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
    "DNNRegressor", "Head", "LinearClassifier", "LinearEstimator", "LinearRegressor", "LogisticRegressionHead",
    "MultiClassHead", "MultiHead", "MultiLabelHead", "PoissonRegressionHead", "RegressionHead",
    "classifier_parse_example_spec", "regressor_parse_example_spec",
    "BestExporter", "BoostedTreesClassifier", "BoostedTreesRegressor",
    "CheckpointSaverHook", "CheckpointSaverListener", "CrossShardOptimizer", "Estimator",
    "EstimatorSpec", "EvalOutput", "EvalSpec", "EvaluationInterrupted", "Exporter", "FeedFnHook", "FinalExporter",
    "FinalOpsHook",
    "GlobalStepWaiterHook", "Hook", "InputPipelineConfig", "LatestExporter", "LoggingTensorHook", "ModeKeys",
    "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "RunConfig", "SavingListener", "SecondOrStepTimer",
    "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec", "TrainSpec", "TrainingInterrupted",
    "VocabInfo", "WarmStartSettings", "add_metrics", "call_logit_fn", "experimental", "inputs", "model_to_estimator",
    "preflight", "train_and_evaluate",
]


if "tensorflow" in _sys.modules:  # a program that imported TensorFlow first learns of a wrong version at once
    _require_tensorflow()
else:
    _check_installed_version()

_SUBMODULES = frozenset(info.name for info in _pkgutil.iter_modules(__path__))


def __getattr__(name: str):
    """Loads a public name on first use (checking TensorFlow first), or a submodule (`estimators.export`);
    any other name is an AttributeError at once (hasattr probes import nothing)."""
    if name in _SOURCES or name in _V1_TRAIN or name in _SUBPACKAGES:
        _require_tensorflow()
        if name in _V1_TRAIN:
            import tensorflow as tf

            value = getattr(tf.compat.v1.train, name)
        elif name in _SUBPACKAGES:
            value = _importlib.import_module(f"{__name__}.{name}")
        else:
            value = getattr(_importlib.import_module(_SOURCES[name]), name)
    elif name in _SUBMODULES:  # not public: a submodule, whose own imports decide whether TensorFlow starts
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({name for name in globals() if not name.startswith("_")} | set(__all__))


class _Package(_types.ModuleType):
    """`estimators.preflight` stays the function, as when this package imported everything at once: importing
    the subpackage of that name (estimators.preflight.check, ...) would otherwise set it to the module."""

    def __setattr__(self, name: str, value) -> None:
        if name == "preflight" and isinstance(value, _types.ModuleType):
            return  # the subpackage stays in sys.modules["estimators.preflight"]
        super().__setattr__(name, value)

    def __reduce__(self):  # pickled by name, as a plain module is (cloudpickle picks reducers by exact type)
        return _importlib.import_module, (self.__name__,)


_sys.modules[__name__].__class__ = _Package
