"""The TF2 path's entry: train, evaluate, predict and export one Estimator's model_fn (an EngineContext) in
tf.function under its deployment's strategies, with the state that lives across calls (runtimes, the train
stream and its position, step summaries)."""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from estimators import log as logging
from estimators.checkpoint import mapping, warm_start
from estimators.checkpoint.lock import ModelDirLock
from estimators.checkpoint.model_dir_check import check_model_dir
from estimators.compat.input_fn_call import dataset_of_call
from estimators.distribute.strategy import is_chief
from estimators.engine_context import EngineContext
from estimators.mode_keys import ModeKeys
from estimators.tf2.collection import Held, free_in_background, keep_until_safe, safe_point
from estimators.tf2.predictions import split_predictions
from estimators.tf2.state import Runtime
from estimators.tf2.train_input import StartingOverAtItsEnd, TrainInput
from estimators.tf2.train_session import TrainSession
from estimators.training import eval_summaries
from estimators.training.controller import SIGNAL, TrainController
from estimators.training.hooks import Hook, SavingListener, checked_hooks
from estimators.training.iterations import IterationsPerLoop
from estimators.training.logging_hook import fetch_names
from estimators.training.loops import InferenceLoopResult
from estimators.training.preemption import EvaluationInterrupted, TrainingInterrupted, stopping_on_signals
from estimators.training.progress_display import ProgressDisplay
from estimators.training.step_summaries import StepSummaries

INPUT_POSITION = "estimators/input_position"  # train-stream steps taken, saved with every checkpoint


def _to_python(value: Any) -> Any:
    """A metric's value: a Python number for a scalar, an array, or (a nested v1 metric value) the same nesting."""
    if isinstance(value, (tuple, list)):
        return type(value)(_to_python(item) for item in value)
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, np.generic)) or (isinstance(value, np.ndarray) and value.ndim == 0)


def _no_hooks(hooks: Any, what: str) -> None:
    """evaluate()/predict() run no hooks (hooks are called between training loops): say so, never ignore them."""
    checked_hooks(hooks, f"{what} hooks", Hook)
    if hooks:
        raise ValueError(f"{what} takes no hooks: hooks are called between training loops. Read what you need "
                         "from evaluate()'s results or predict()'s outputs.")


def _skipping(input_fn: Callable, elements: int, config: Any = None) -> Callable:
    """input_fn whose dataset starts `elements` elements in (same signature: arguments still go by name)."""
    if elements <= 0:
        return input_fn

    @functools.wraps(input_fn)
    def skipped(*args, **kwargs):
        return dataset_of_call(lambda: input_fn(*args, **kwargs), config).skip(elements)

    return skipped


def _warn_not_finite(results: dict) -> None:
    """tf.estimator returned NaN metrics without a word; they are still returned, but said out loud."""
    bad = sorted(k for k, v in results.items() if isinstance(v, float) and not math.isfinite(v))
    if bad:
        logging.warning("Evaluation at global step %d gave non-finite %s: the eval data or the model's weights hold "
                        "NaN or Inf (check the input_fn's features; a diverged model has NaN weights).",
                        results["global_step"], ", ".join(f"{k}={results[k]}" for k in bad))


class TF2Executor:
    """One Estimator's TF2 path: its calls, and the state they share across calls."""

    def __init__(self, context: EngineContext):
        self._ctx = context
        self.runtimes: dict[int, Runtime] = {}  # one per strategy
        self._train_input = TrainInput(self)
        self._position: tf.Variable | None = None
        self._step_summaries: dict[Runtime, StepSummaries] = {}

    # -- state across calls -------------------------------------------------------------------------------------
    def runtime(self, mode: str) -> Runtime:
        """The runtime (model_fn's variables and compiled steps) of `mode`'s strategy, made once."""
        ctx = self._ctx
        strategy = ctx.deployment.strategy(mode)
        runtime = self.runtimes.get(id(strategy))
        if runtime is None:
            runtime = Runtime(strategy, ctx.model_fn, dict(ctx.params), ctx.config, ctx.deployment.static_shapes,
                              params_for_model_fn=ctx.deployment.params_for_model_fn)
            self.runtimes[id(strategy)] = runtime
        return runtime

    @property
    def _input_position(self) -> tf.Variable:
        """The train stream's position as a variable for checkpoints; made when this path first trains."""
        if self._position is None:
            with tf.init_scope():
                self._position = tf.Variable(0, dtype=tf.int64, trainable=False, name="input_position")
        return self._position

    def _summaries_of(self, runtime: Runtime) -> StepSummaries | None:
        """The summaries train steps write (the chief's; none on other workers), one per runtime."""
        if not is_chief(runtime.strategy):
            return None
        if runtime not in self._step_summaries:
            self._step_summaries[runtime] = StepSummaries(
                self._ctx.summaries.writer(""), self._ctx.config.save_summary_steps, runtime.global_step)
        return self._step_summaries[runtime]

    def _saves_input_position(self) -> bool:
        return getattr(self._ctx.config, "save_input_position", True)

    # -- checkpoints --------------------------------------------------------------------------------------------
    def _restore(self, path: str, variables: dict) -> None:
        checkpointer = self._ctx.checkpointer
        stored = checkpointer.restorable(path)  # an object-based checkpoint by its variables' TF1 names too
        checkpointer.restore(path, mapping.restore_plan(variables, stored, ()))

    def _warm_start_from(self, runtime: Runtime) -> None:
        """tf.estimator's warm start: the selected variables from another checkpoint, the rest as initialised."""
        trainable = {e.name for e in runtime.store.entries() if e.tf1_trainable}
        path, assignments = warm_start.plan(self._ctx.warm_start, runtime.saved_variables(), trainable)
        self._ctx.checkpointer.restore(path, assignments)
        logging.info("Warm-started %d variables from %s.", len(assignments), path)

    def _save(self, runtime: Runtime, step: int, lock: ModelDirLock | None) -> str | None:
        """The chief writes the checkpoint (with the train stream's position); every worker waits for it."""
        path = None
        if is_chief(runtime.strategy):
            if lock is not None:
                lock.heartbeat()
            position = self._input_position
            position.assign(self._train_input.position)
            variables = dict(runtime.saved_variables())
            if self._saves_input_position():
                variables[INPUT_POSITION] = position
            path = self._ctx.checkpointer.save(variables, step)
            logging.debug("Saved checkpoint for step %d: %s", step, path)
        runtime.barrier()  # no worker reads model_dir before the chief's checkpoint is complete
        return path

    def _resume_position(self, latest: str | None) -> int:
        """Train-stream steps a checkpoint records as taken (0 without one, or when the stream ended)."""
        if latest is None or not self._saves_input_position():
            return 0
        if INPUT_POSITION not in self._ctx.checkpointer.contents(latest):
            return 0
        return int(tf.train.load_variable(latest, INPUT_POSITION))

    def _restore_for_training(self, runtime: Runtime, latest: str | None) -> None:
        if latest:
            self._restore(latest, runtime.saved_variables())
            step = int(runtime.global_step.numpy())
            logging.info("Resumed from %s (global step %d).", latest, step)
            if is_chief(runtime.strategy):
                self._ctx.summaries.resumed("", step)
            return
        runtime.global_step.assign(0)
        if self._ctx.warm_start is not None:
            self._warm_start_from(runtime)

    def _restore_for_inference(self, runtime: Runtime, path: str | None) -> None:
        """The model's weights from `path` (every one required); without a checkpoint, as tf.estimator did."""
        if path is not None:
            self._restore(path, runtime.model_variables())
            return
        runtime.global_step.assign(0)
        if self._ctx.warm_start is not None:
            self._warm_start_from(runtime)
            return
        logging.warning("Could not find a trained model in model_dir %s; running with freshly initialised "
                        "variables.", self._ctx.model_dir)

    # -- train --------------------------------------------------------------------------------------------------
    def train(self, input_fn: Callable, hooks: Any, steps: int | None, max_steps: int | None,
              saving_listeners: Any) -> None:
        """Trains until `steps` more steps, `max_steps` in all, the end of the data, a hook's stop or a signal."""
        ctx = self._ctx
        hooks = checked_hooks(hooks, "train() hooks", Hook)
        listeners = checked_hooks(saving_listeners, "train() saving_listeners", SavingListener)
        check_model_dir(ctx.model_dir, write=ctx.config.is_chief)  # only the chief writes model_dir
        latest = ctx.checkpointer.latest()
        start = ctx.checkpointer.global_step(latest) if latest else 0
        if max_steps is not None and start >= max_steps:
            logging.info("Skipping training: global step %d already reached max_steps=%d.", start, max_steps)
            return
        target = max_steps if max_steps is not None else (start + steps if steps is not None else math.inf)

        runtime = self.runtime(ModeKeys.TRAIN)
        chief = is_chief(runtime.strategy)
        ctx.checkpointer.is_chief = chief
        batch_size = ctx.deployment.model_fn_batch_size(ModeKeys.TRAIN, runtime.strategy)
        lock = ModelDirLock(ctx.model_dir) if chief else contextlib.nullcontext()
        display = ProgressDisplay("train", total=None if math.isinf(target) else int(target), start=start)
        summaries = self._summaries_of(runtime)  # its variable outside the strategy: chief-only state
        _ = self._input_position  # made here, outside the strategy: no worker-side collective
        with display, lock as held, safe_point(collect_first=True), runtime.strategy.scope(), \
                stopping_on_signals(ctx.stop):
            per_step = ctx.deployment.input_elements_per_step(runtime.strategy)

            def make(at: int):
                skipped = _skipping(input_fn, at * per_step, ctx.config)
                return iter(ctx.deployment.distributed_dataset(runtime.strategy, skipped, ModeKeys.TRAIN))

            self._train_input.iterator(input_fn, make, resume_at=self._resume_position(latest))
            if summaries is not None:
                summaries.starting_at(start)
            loop, trace = runtime.train_loop(batch_size, ctx.stop.variable, summaries, fetch_names(hooks))
            display.compiling()
            compile_started = time.monotonic()
            loop.trace(self._train_input.live)  # no local reference: the stream may be freed in the background
            display.compiled(time.monotonic() - compile_started)
            loop.fetches.attach(hooks, [*trace.training_hooks, *trace.chief_hooks])
            self._restore_for_training(runtime, latest)
            session = TrainSession(
                runtime=runtime, trace=trace, train_input=self._train_input, start=start, target=target,
                run_loop=StartingOverAtItsEnd(loop, self._train_input, input_fn, make,
                                              stopping=lambda: ctx.stop.signal_name is not None),
                save=lambda step: self._save(runtime, step, held if chief else None),
                config=ctx.config, global_batch=ctx.deployment.global_batch_size(ModeKeys.TRAIN),
                summaries=ctx.summaries, display=display, stop=ctx.stop,
                hooks=[*hooks, *trace.training_hooks, *(trace.chief_hooks if chief else ())], listeners=listeners,
                resume_note=ctx.checkpointer.resume_note)
            result = TrainController(session).run()
        if result.stopped_by == SIGNAL:
            raise TrainingInterrupted(ctx.stop.signal_name or "a signal", result.step, result.checkpoint)

    # -- evaluate and predict -----------------------------------------------------------------------------------
    def evaluate(self, input_fn: Callable, steps: int | None, hooks: Any, path: str | None,
                 name: str | None) -> dict:
        """Exact metrics over input_fn's data (or `steps` batches) of the checkpoint at `path`."""
        ctx = self._ctx
        _no_hooks(hooks, "evaluate()")
        runtime = self.runtime(ModeKeys.EVAL)
        batch_size = ctx.deployment.model_fn_batch_size(ModeKeys.EVAL, runtime.strategy)
        _, trace = runtime.inference_loop(ModeKeys.EVAL, batch_size, ctx.stop.variable)
        loss_sum, loss_weight, count, batches = 0.0, 0.0, 0.0, 0
        with ProgressDisplay("evaluate", total=steps, unit="batches") as display:
            for result in self._inference(runtime, ModeKeys.EVAL, input_fn, batch_size, steps, path):
                loss_sum += result.loss_sum
                loss_weight += result.loss_weight
                count += result.count
                batches += result.steps
                runtime.update_host_metrics(trace, result.rows, result.mask)
                display.update(batches, loss=loss_sum / loss_weight if loss_weight else None)
        with runtime.strategy.scope():
            results = {key: _to_python(metric.result()) for key, metric in runtime.metric_objects(trace).items()}
        if count == 0:
            raise ValueError("Evaluation input_fn produced no examples: check that its dataset is not empty (a "
                             "filter, take(0), or batch(drop_remainder=True) over fewer examples than one batch).")
        results["loss"] = loss_sum / loss_weight
        results["global_step"] = int(runtime.global_step.numpy())
        _warn_not_finite(results)
        subdir = f"eval_{name}" if name else "eval"
        scalars = {k: v for k, v in results.items() if k != "global_step" and _is_scalar(v)}
        if is_chief(runtime.strategy):  # 2.15's layout: one event of every metric, then the checkpoint path
            ctx.summaries.raw(subdir, results["global_step"], eval_summaries.metrics_summary(results))
            if path:
                ctx.summaries.raw(subdir, results["global_step"], eval_summaries.checkpoint_path_summary(path))
        logging.info("Evaluation at global step %d: %s", results["global_step"], scalars)
        return results

    def predict(self, input_fn: Callable, predict_keys: list[str] | None, hooks: Any, path: str | None,
                yield_single_examples: bool) -> Iterator:
        """model_fn's predictions for every example of input_fn's data, in input order."""
        _no_hooks(hooks, "predict()")
        runtime = self.runtime(ModeKeys.PREDICT)
        batch_size = self._ctx.deployment.model_fn_batch_size(ModeKeys.PREDICT, runtime.strategy)
        with ProgressDisplay("predict", unit="examples") as display:
            examples = 0
            for result in self._inference(runtime, ModeKeys.PREDICT, input_fn, batch_size, None, path):
                examples += int(result.count)
                display.update(examples)
                yield from split_predictions(result.rows, result.mask, predict_keys, yield_single_examples,
                                             result.step_rows)

    def _inference(self, runtime: Runtime, mode: str, input_fn: Callable, batch_size: int | None,
                   steps: int | None, path: str | None) -> Iterator[InferenceLoopResult]:
        """Runs the eval/predict loop over the input, yielding each loop's result.

        The strategy's scope is held only while TensorFlow runs, never across a yield: a caller
        may stop reading predictions half way without leaving a scope open. The global step is
        put back after every loop: only training moves it (a model_fn may touch it in any mode).
        An evaluation stops before the next batch on SIGINT/SIGTERM (EvaluationInterrupted). Predict runs one
        batch per loop, as 2.15 did (on a TPU too): the first predictions come after one batch, not a loop's.
        """
        ctx = self._ctx
        per_loop = IterationsPerLoop(1 if mode == ModeKeys.PREDICT else ctx.config.tpu_config.iterations_per_loop)
        remaining = steps if steps is not None else math.inf
        loop, trace = runtime.inference_loop(mode, batch_size, ctx.stop.variable if mode == ModeKeys.EVAL
                                             else None)
        batches = 0
        iterator = Held()  # the only reference: freed in the background when this generator ends
        try:
            with safe_point(collect_first=True), runtime.strategy.scope():
                iterator.value = iter(ctx.deployment.distributed_dataset(runtime.strategy, input_fn, mode))
                first_value = next(iterator.value)
                runtime.remember_eval_element(first_value)
                loop.trace(iterator.value, iterator.value.element_spec)
                self._restore_for_inference(runtime, path)
                step = runtime.global_step.read_value()
                for metric in runtime.metric_objects(trace).values():
                    metric.reset_state()
            while remaining > 0:
                if mode == ModeKeys.EVAL and runtime.any_worker(ctx.stop.requested):
                    raise EvaluationInterrupted(ctx.stop.signal_name or "a signal", int(step), path, batches)
                iterations = per_loop.next(remaining)
                started = time.monotonic()
                with safe_point(), runtime.strategy.scope():
                    result, first_value = loop(iterator.value, first_value, iterations)
                    runtime.global_step.assign(step)
                    remaining -= result.steps
                    more = not result.ended and remaining > 0 and loop.has_rows(first_value)
                per_loop.record(result.steps, time.monotonic() - started)
                batches += result.steps
                yield result
                if not more:
                    break
        except GeneratorExit:
            # The caller stopped reading: the iterator may be mid-batch, and freeing it then can wait seconds on
            # its input threads. The next engine call frees it; a program that ends first never waits for it.
            keep_until_safe(Held(iterator.value))
            iterator.value = None
            raise
        finally:
            free_in_background(iterator)

    # -- export -------------------------------------------------------------------------------------------------
    def export(self, path: str, export_dir_base: str, serving_input_receiver_fn: Callable,
               assets_extra: dict | None, as_text: bool, experimental_mode: str) -> bytes:
        """A SavedModel of model_fn (in `experimental_mode`) with the checkpoint at `path`; its directory."""
        from estimators.tf2.saved_model import export_saved_model

        ctx = self._ctx
        with safe_point(collect_first=True):
            return export_saved_model(ctx.model_fn, ctx.deployment.export_params(), ctx.config, path,
                                      export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra,
                                      as_text=as_text, experimental_mode=experimental_mode)
