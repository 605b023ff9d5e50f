"""train_and_evaluate and what runs beside it: `training.py` (TrainSpec, EvalSpec, the executor that runs one task)
and `exporters.py` (EvalSpec's exporters, which export after evaluations). Above the Estimator: nothing in the
engine imports this package."""

from estimators.train_eval.exporters import BestExporter, Exporter, FinalExporter, LatestExporter
from estimators.train_eval.training import EvalSpec, TrainSpec, train_and_evaluate

__all__ = ["BestExporter", "EvalSpec", "Exporter", "FinalExporter", "LatestExporter", "TrainSpec",
           "train_and_evaluate"]
