"""An export output as a flat list of its tensors, and back (2.15's TPUEstimator export helpers).

2.15 exported a TPU model by running model_fn's serving computation on the TPU and rebuilding each
`export_outputs` entry around the tensors the TPU computation returned. `export_output_to_tensors`
lists an output's tensors in a fixed order (ClassificationOutput: [scores, classes], either may be
None; RegressionOutput: [value]; PredictOutput: its outputs' values in key order), and
`clone_export_output_with_tensors` builds the same kind of output from a list in that order.
TensorFlow's own export-output classes are accepted as well as ours.
"""

from __future__ import annotations

from typing import Any

from tensorflow.python.saved_model.model_utils import export_output as tf_export_output

from estimators.export import outputs as ours

_CLASSIFICATION = (ours.ClassificationOutput, tf_export_output.ClassificationOutput)
_REGRESSION = (ours.RegressionOutput, tf_export_output.RegressionOutput)
_PREDICT = (ours.PredictOutput, tf_export_output.PredictOutput)


def _refuse(export_output: Any) -> ValueError:
    return ValueError("`export_output` must be have type `ClassificationOutput`, `RegressionOutput`, or "
                      f"`PredictOutput`; got {export_output}.")


def export_output_to_tensors(export_output: Any) -> list:
    """The output's tensors: [scores, classes], [value], or the predict outputs' values in key order."""
    if isinstance(export_output, _CLASSIFICATION):
        return [export_output.scores, export_output.classes]
    if isinstance(export_output, _REGRESSION):
        return [export_output.value]
    if isinstance(export_output, _PREDICT):
        return list(export_output.outputs.values())
    raise _refuse(export_output)


def clone_export_output_with_tensors(export_output: Any, tensors: list) -> Any:
    """An output of the same class as `export_output` around `tensors` (in export_output_to_tensors' order)."""
    cls = type(export_output)
    if isinstance(export_output, _CLASSIFICATION):
        if len(tensors) != 2:
            raise ValueError(f"tensors must be of length 2 (scores, classes); got {len(tensors)}.")
        return cls(*tensors)
    if isinstance(export_output, _REGRESSION):
        if len(tensors) != 1:
            raise ValueError(f"tensors must be of length 1 (value); got {len(tensors)}.")
        return cls(*tensors)
    if isinstance(export_output, _PREDICT):
        return cls(dict(zip(export_output.outputs.keys(), tensors, strict=False)))
    raise _refuse(export_output)


# 2.15's names (tpu_estimator._export_output_to_tensors, ...)
_export_output_to_tensors = export_output_to_tensors
_clone_export_output_with_tensors = clone_export_output_with_tensors
