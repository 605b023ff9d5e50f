"""SavedModel export for serving, under tf.estimator.export's names.

The exporters for EvalSpec (tf.estimator.LatestExporter, BestExporter, FinalExporter, Exporter)
live in estimators.train_eval.exporters and are re-exported from `estimators`, where tf.estimator had them.
The supervised receivers and outputs (SupervisedInputReceiver, EvalOutput, TrainOutput, ...) describe
training and evaluation graphs; a serving export leaves EvalOutput/TrainOutput signatures out, as 2.15 did.
"""

from estimators.export.outputs import (
    ClassificationOutput,
    EvalOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
    TrainOutput,
)
from estimators.export.receivers import (
    ServingInputReceiver,
    SupervisedInputReceiver,
    TensorServingInputReceiver,
    UnsupervisedInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
    build_raw_supervised_input_receiver_fn,
    build_supervised_input_receiver_fn_from_input_fn,
)

__all__ = [
    "ClassificationOutput", "EvalOutput", "ExportOutput", "PredictOutput", "RegressionOutput", "ServingInputReceiver",
    "SupervisedInputReceiver", "TensorServingInputReceiver", "TrainOutput", "UnsupervisedInputReceiver",
    "build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn",
    "build_raw_supervised_input_receiver_fn", "build_supervised_input_receiver_fn_from_input_fn",
]
