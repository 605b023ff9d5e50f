"""tf.compat.v1.estimator.tpu's names, for ports: `from estimators import tpu` then `tpu.TPUEstimator(...)`.

TPUContext was not public in 2.15 (models met it only as params['context']); it is here so that
code can check for it.
"""

from estimators.compat.tpu_context import TPUContext
from estimators.run_config import InputPipelineConfig, TPUConfig
from estimators.run_config import TPURunConfig as RunConfig
from estimators.specs import TPUEstimatorSpec
from estimators.tpu.estimator import ExportSavedModelApiVersion, TPUEstimator

__all__ = ["ExportSavedModelApiVersion", "InputPipelineConfig", "RunConfig", "TPUConfig", "TPUContext",
           "TPUEstimator", "TPUEstimatorSpec"]
