"""A TPUEstimator-style model_fn/input_fn framework on TensorFlow >= 2.16 and tf.distribute."""

from estimators._tf_check import require_tensorflow

require_tensorflow()

import tensorflow as _tf  # noqa: E402

from estimators import experimental, inputs  # noqa: E402
from estimators.canned import (  # noqa: E402
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
    BinaryClassHead,
    DNNClassifier,
    DNNEstimator,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    Head,
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
    MultiClassHead,
    MultiLabelHead,
    PoissonRegressionHead,
    RegressionHead,
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)
from estimators.checkpoint.warm_start import WarmStartSettings  # noqa: E402
from estimators.cross_shard_optimizer import CrossShardOptimizer  # noqa: E402
from estimators.estimator import Estimator  # noqa: E402
from estimators.export.exporters import BestExporter, Exporter, FinalExporter, LatestExporter  # noqa: E402
from estimators.export.outputs import EvalOutput  # noqa: E402
from estimators.extenders import add_metrics  # noqa: E402
from estimators.keras_model import model_to_estimator  # noqa: E402
from estimators.logit_fn import call_logit_fn  # noqa: E402
from estimators.mode_keys import ModeKeys  # noqa: E402
from estimators.preflight import preflight  # noqa: E402
from estimators.run_config import InputPipelineConfig, RunConfig, TPUConfig  # noqa: E402
from estimators.specs import EstimatorSpec, TPUEstimatorSpec  # noqa: E402
from estimators.tpu_estimator import TPUEstimator  # noqa: E402
from estimators.training.hooks import Hook, SavingListener, StopAtStepHook  # noqa: E402
from estimators.training.logging_hook import LoggingTensorHook  # noqa: E402
from estimators.training.preemption import EvaluationInterrupted, TrainingInterrupted  # noqa: E402
from estimators.training.train_and_evaluate import EvalSpec, TrainSpec, train_and_evaluate  # noqa: E402

# tf.compat.v1.train's session hooks and helpers, as tf.estimator re-exported them. They run on the
# graph-and-session path (estimators/graph/); LoggingTensorHook and StopAtStepHook above are the
# engine's own, which both paths take.
SessionRunHook = _tf.compat.v1.train.SessionRunHook
SessionRunArgs = _tf.compat.v1.train.SessionRunArgs
SessionRunContext = _tf.compat.v1.train.SessionRunContext
SessionRunValues = _tf.compat.v1.train.SessionRunValues
CheckpointSaverHook = _tf.compat.v1.train.CheckpointSaverHook
CheckpointSaverListener = _tf.compat.v1.train.CheckpointSaverListener
FeedFnHook = _tf.compat.v1.train.FeedFnHook
FinalOpsHook = _tf.compat.v1.train.FinalOpsHook
GlobalStepWaiterHook = _tf.compat.v1.train.GlobalStepWaiterHook
NanTensorHook = _tf.compat.v1.train.NanTensorHook
ProfilerHook = _tf.compat.v1.train.ProfilerHook
SecondOrStepTimer = _tf.compat.v1.train.SecondOrStepTimer
StepCounterHook = _tf.compat.v1.train.StepCounterHook
SummarySaverHook = _tf.compat.v1.train.SummarySaverHook
NanLossDuringTrainingError = _tf.compat.v1.train.NanLossDuringTrainingError
VocabInfo = _tf.compat.v1.train.VocabInfo

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
