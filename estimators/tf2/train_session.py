"""One train() call on the TF2 path: its input, model_dir lock, progress, checkpoint schedule and saving, stop
signal and worker agreement, behind the few methods the controller calls (Orbit's trainer, for our loop)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from estimators import log as logging
from estimators.distribute.strategy import is_chief
from estimators.training.hooks import Hook, LoopInfo, SavingListener
from estimators.training.iterations import IterationsPerLoop
from estimators.training.loops import TrainLoopResult
from estimators.training.progress import CheckpointSchedule, ProgressReport
from estimators.training.progress_display import ProgressDisplay


class TrainSession:
    """What the controller drives: `train(n)` runs up to n steps; `save(step)` writes the checkpoint; the rest
    answers what happens between loops (is a checkpoint due, did a signal arrive, do the workers agree)."""

    def __init__(self, *, runtime: Any, run_loop: Callable[[int], TrainLoopResult], trace: Any,
                 train_input: Any, save: Callable[[int], str | None], start: int, target: float,
                 config: Any, global_batch: int | None, summaries: Any, display: ProgressDisplay,
                 stop: Any, hooks: Sequence[Hook], listeners: Sequence[SavingListener],
                 resume_note: Callable[[], str] | None):
        self.start, self.target = start, target
        self.iterations = IterationsPerLoop(config.tpu_config.iterations_per_loop)
        self.hooks, self.listeners = list(hooks), list(listeners)
        self.resume_note = resume_note
        self._runtime, self._run_loop, self._trace = runtime, run_loop, trace
        self._input, self._write = train_input, save
        self._display, self._stop, self._global_batch = display, stop, global_batch
        self._schedule = CheckpointSchedule(start, config.save_checkpoints_steps, config.checkpoint_every_secs)
        chief = is_chief(runtime.strategy)
        self._report = ProgressReport(
            start, config.log_step_count_steps, config.save_summary_steps, global_batch,
            (lambda at, values: summaries.scalars("", at, values)) if chief else None,
            log=logging.debug if display.enabled else logging.info,
        )

    @property
    def has_optimizer(self) -> bool:
        """Whether model_fn's train_op uses an optimizer (its learning rate is then reported)."""
        return bool(self._trace.optimizers)

    def train(self, num_steps: int) -> TrainLoopResult:
        """Runs up to `num_steps` steps (fewer when the input ends or a signal stops the loop)."""
        return self._run_loop(num_steps)

    def input_advanced(self, steps: int, ended: bool) -> None:
        """The train stream moved `steps` steps (and ended: the next call starts it over)."""
        self._input.advanced(steps, ended)

    def report(self, info: LoopInfo, final: bool) -> None:
        """Progress and summaries after a loop: the log, the step summaries, the progress display."""
        self._report.after_loop(info.step, info.steps, info.seconds, info.loss, info.learning_rate, final)
        batch = self._global_batch
        rate = info.steps / info.seconds * batch if batch and info.seconds > 0 else None
        # model_fn's reported scalars (train_metrics.report: the mean over this loop's steps) after the loss
        self._display.update(info.step, loss=info.loss, examples_per_sec=rate, metrics=info.metrics)

    def checkpoint_due(self, step: int) -> bool:
        return self._schedule.due(step)

    def save(self, step: int) -> str | None:
        """Writes the checkpoint for `step` (the chief's path; None on other workers) and restarts the schedule."""
        path = self._write(step)
        if path:
            self._display.note(f"Saved checkpoint for step {step}: {path}")
        self._schedule.saved(step)
        return path

    def should_stop(self) -> str | None:
        """A signal's name once SIGTERM/SIGINT arrived, else None."""
        return self._stop.signal_name

    def agree(self, vote: bool) -> bool:
        """All workers' stop votes -> whether any wants to stop (so every worker leaves the loop together)."""
        return self._runtime.any_worker(vote)
