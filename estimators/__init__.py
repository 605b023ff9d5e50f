"""A TPUEstimator-style model_fn/input_fn framework on TensorFlow >= 2.16 and tf.distribute."""

from estimators._tf_check import require_tensorflow

require_tensorflow()

from estimators import experimental  # noqa: E402
from estimators.checkpoint.warm_start import WarmStartSettings  # noqa: E402
from estimators.cross_shard_optimizer import CrossShardOptimizer  # noqa: E402
from estimators.estimator import Estimator  # noqa: E402
from estimators.export.exporters import BestExporter, Exporter, FinalExporter, LatestExporter  # noqa: E402
from estimators.keras_model import model_to_estimator  # noqa: E402
from estimators.mode_keys import ModeKeys  # noqa: E402
from estimators.preflight import preflight  # noqa: E402
from estimators.run_config import InputPipelineConfig, RunConfig, TPUConfig  # noqa: E402
from estimators.specs import EstimatorSpec, TPUEstimatorSpec  # noqa: E402
from estimators.tpu_estimator import TPUEstimator  # noqa: E402
from estimators.training.hooks import Hook, SavingListener, StopAtStepHook  # noqa: E402
from estimators.training.logging_hook import LoggingTensorHook  # noqa: E402
from estimators.training.preemption import TrainingInterrupted  # noqa: E402
from estimators.training.train_and_evaluate import EvalSpec, TrainSpec, train_and_evaluate  # noqa: E402

__all__ = [
    "BestExporter", "CrossShardOptimizer", "Estimator", "EstimatorSpec", "EvalSpec", "Exporter", "FinalExporter",
    "Hook", "InputPipelineConfig", "LatestExporter", "LoggingTensorHook", "ModeKeys", "RunConfig", "SavingListener",
    "StopAtStepHook", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec", "TrainSpec", "TrainingInterrupted",
    "WarmStartSettings", "experimental", "model_to_estimator", "preflight", "train_and_evaluate",
]
