"""A TPUEstimator-style model_fn/input_fn framework on TensorFlow >= 2.16 and tf.distribute."""

from estimators._tf_check import require_tensorflow

require_tensorflow()

from estimators.cross_shard_optimizer import CrossShardOptimizer  # noqa: E402
from estimators.estimator import Estimator  # noqa: E402
from estimators.mode_keys import ModeKeys  # noqa: E402
from estimators.run_config import RunConfig, TPUConfig  # noqa: E402
from estimators.specs import EstimatorSpec, TPUEstimatorSpec  # noqa: E402
from estimators.tpu_estimator import TPUEstimator  # noqa: E402
from estimators.training.train_and_evaluate import EvalSpec, TrainSpec, train_and_evaluate  # noqa: E402

__all__ = [
    "CrossShardOptimizer", "Estimator", "EstimatorSpec", "EvalSpec", "ModeKeys", "RunConfig",
    "TPUConfig", "TPUEstimator", "TPUEstimatorSpec", "TrainSpec", "train_and_evaluate",
]
