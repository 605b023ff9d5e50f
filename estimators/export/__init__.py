"""SavedModel export for serving, under tf.estimator.export's names.

The exporters for EvalSpec (tf.estimator.LatestExporter, BestExporter, FinalExporter, Exporter)
live in estimators.export.exporters and are re-exported from `estimators`, where tf.estimator had them.
"""

from estimators.export.outputs import ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput
from estimators.export.receivers import (
    ServingInputReceiver,
    TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
)

__all__ = [
    "ClassificationOutput", "ExportOutput", "PredictOutput", "RegressionOutput", "ServingInputReceiver",
    "TensorServingInputReceiver", "build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn",
]
