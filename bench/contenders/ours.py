"""ours: the project's TPUEstimator.train() on the model_fn, configured as main.py configures it.

Precision is the engine's own setting (params["precision"]; main.py's --precision sets the same through
RunConfig), which sets Keras's policy around every model_fn call; the worker leaves the global policy at
float32 for ours.

Each loop of iterations_per_loop steps ends with the engine reading the loss and logging
"global_step = N, ..." (log_step_count_steps = iterations_per_loop, as launch/build.py sets);
a logging handler turns those lines into clock marks, so nothing in the engine is patched.
Checkpoints and summaries are pushed past the run (written once, after the timed window),
since the other contenders write neither.
"""

from __future__ import annotations

import logging
import shutil
import tempfile

from absl import logging as absl_logging

from bench import models
from bench.clock import StepClock
from bench.plan import Job, Workload
from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.training import progress_display

NEVER = 10**9
EVAL_BATCH_SIZE = 500


class LoopMarks(logging.Handler):
    """Marks the clock at each engine log line "global_step = N, ..." (one per finished loop)."""

    def __init__(self, clock: StepClock):
        super().__init__(logging.INFO)
        self.clock = clock

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, str) and record.msg.startswith("global_step = ") and record.args:
            self.clock.mark(int(record.args[0]), at=record.created)


def run(job: Job, workload: Workload, clock: StepClock) -> dict:
    progress_display.configure(enabled=False)  # per-loop log lines at INFO, no live display
    absl_logging.set_verbosity(absl_logging.INFO)
    absl_logging.get_absl_handler().setLevel(logging.WARNING)  # capture INFO lines, print only warnings
    handler = LoopMarks(clock)
    logging.getLogger("absl").addHandler(handler)
    model_dir = tempfile.mkdtemp(prefix="bench_ours_")
    try:
        data = models.source(workload.dataset, workload.image_shape)
        k = job.iterations_per_loop
        config = RunConfig(
            model_dir=model_dir, tf_random_seed=job.seed, save_checkpoints_steps=NEVER,
            save_summary_steps=NEVER, log_step_count_steps=k, tpu_config=TPUConfig(iterations_per_loop=k),
        )
        estimator = TPUEstimator(
            models.model_fn(workload.model), config=config,
            params=dict(models.params(workload.model), precision=models.engine_precision(job.precision)),
            use_tpu=False, train_batch_size=job.batch_size, eval_batch_size=EVAL_BATCH_SIZE,
        )
        estimator.train(data.input_fn("train", seed=job.seed), max_steps=job.warmup_steps + job.timed_steps)
        extra: dict = {}
        if job.accuracy:
            extra["test_accuracy"] = float(estimator.evaluate(data.input_fn("eval"))["accuracy"])
        return extra
    finally:
        logging.getLogger("absl").removeHandler(handler)
        shutil.rmtree(model_dir, ignore_errors=True)
