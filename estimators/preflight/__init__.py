"""TPU preflight on the CPU: `preflight(estimator, input_fns)` reports what a TPU would reject, in plain words.

Dynamic shapes, ops XLA cannot compile, float64, strings, and per-core batches that do not
divide or that a TPU pads; see check.py for how, and `python main.py --mode=preflight`.
"""

from estimators.preflight.check import preflight
from estimators.preflight.report import ERROR, WARNING, Finding, PreflightReport, StepSummary

__all__ = ["ERROR", "WARNING", "Finding", "PreflightReport", "StepSummary", "preflight"]
