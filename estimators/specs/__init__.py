"""What model_fn returns and how it is checked: `spec.py` (EstimatorSpec, TPUEstimatorSpec, validate_spec) and
`checks.py` (the checks 2.15 made when a spec was built). The spec names are re-exported here, where programs
import them (`from estimators.specs import EstimatorSpec`)."""

from estimators.specs.spec import (
    AVERAGE_LOSS_METRIC_KEY,
    LOSS_METRIC_KEY,
    EstimatorSpec,
    TPUEstimatorSpec,
    validate_spec,
)

__all__ = ["AVERAGE_LOSS_METRIC_KEY", "LOSS_METRIC_KEY", "EstimatorSpec", "TPUEstimatorSpec", "validate_spec"]
