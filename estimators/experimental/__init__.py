"""tf.estimator.experimental's names that have a meaning here: early stopping from eval event files, the
chief-aware stop hook for asynchronous workers, InMemoryEvaluatorHook, call_logit_fn, the raw supervised receiver,
LinearSDCA (the linear estimators refuse it)."""

from estimators.canned.linear_sdca import LinearSDCA
from estimators.experimental.checkpoint_step_hook import make_stop_at_checkpoint_step_hook
from estimators.experimental.early_stopping import (
    make_early_stopping_hook,
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from estimators.experimental.logit_fn import call_logit_fn
from estimators.export.receivers import build_raw_supervised_input_receiver_fn
from estimators.graph.in_memory_evaluator import InMemoryEvaluatorHook

__all__ = [
    "InMemoryEvaluatorHook", "LinearSDCA", "build_raw_supervised_input_receiver_fn", "call_logit_fn",
    "make_early_stopping_hook", "make_stop_at_checkpoint_step_hook", "read_eval_metrics", "stop_if_higher_hook",
    "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook",
]
