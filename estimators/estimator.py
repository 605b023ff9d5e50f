"""Estimator: runs model_fn/input_fn pairs under tf.distribute with tf.estimator's contract."""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf
from absl import logging

from estimators.checkpoint import checkpoints
from estimators.compat.input_fn_call import call_input_fn
from estimators.distribute.inputs import masked_stream, per_replica_batch_size, split_element
from estimators.distribute.strategy import is_chief, multi_worker_strategy, resolve_strategy
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig
from estimators.runtime.collection import paused_collection
from estimators.runtime.model_fn_call import model_fn_args
from estimators.runtime.state import Runtime
from estimators.training.loops import InferenceLoopResult
from estimators.training.progress import CheckpointSchedule, ProgressReport
from estimators.training.summaries import SummaryWriters
from estimators.training.train_input import TrainInput


def _check_no_hooks(hooks: Any, what: str) -> None:
    if hooks:
        raise ValueError(
            f"{what} hooks are tf.compat.v1 SessionRunHooks, which TF2 cannot run; the engine "
            "logs, checkpoints and writes summaries itself (see RunConfig)."
        )


def _to_python(value: Any) -> Any:
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


class Estimator:
    """Trains, evaluates and predicts with a model_fn on the CPU, one or many GPUs."""

    def __init__(self, model_fn: Callable, model_dir: str | None = None, config: RunConfig | None = None,
                 params: dict | None = None, warm_start_from: str | None = None):
        if not callable(model_fn):
            raise ValueError(f"model_fn must be callable, got {type(model_fn).__name__}.")
        model_fn_args(model_fn)
        config = config if config is not None else RunConfig()
        if not isinstance(config, RunConfig):
            raise ValueError(f"config must be an estimators.RunConfig, got {type(config).__name__}.")
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(
                f"model_dir={model_dir!r} and config.model_dir={config.model_dir!r} differ; set one of them."
            )
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp(prefix="estimator_model_dir_")
            logging.warning("No model_dir given; using temporary folder %s.", model_dir)
        self._model_dir = str(model_dir)
        self._config = config.replace(model_dir=self._model_dir)
        self._params = dict(params or {})
        self._model_fn = model_fn
        self._warm_start_from = warm_start_from
        self._runtimes: dict[int, Runtime] = {}
        self._train_input = TrainInput()
        self._strategies: dict[str, tf.distribute.Strategy] = {}
        self._summaries = SummaryWriters(self._model_dir)
        if config.train_distribute is None and not self._use_tpu:
            workers = multi_worker_strategy()
            if workers is not None:
                self._strategies[ModeKeys.TRAIN] = workers

    # -- public properties (tf.estimator names) ---------------------------------------------
    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self) -> RunConfig:
        return self._config

    @property
    def params(self) -> dict:
        return dict(self._params)

    @property
    def model_fn(self) -> Callable:
        return self._model_fn

    # -- what subclasses change ---------------------------------------------------------------
    _use_tpu = False
    _static_shapes = False

    def _strategy(self, mode: str) -> tf.distribute.Strategy:
        """The strategy for `mode`, made once: eval and predict share train's unless eval_distribute is set."""
        key = ModeKeys.TRAIN if mode == ModeKeys.TRAIN or self._config.eval_distribute is None else ModeKeys.EVAL
        if key not in self._strategies:
            configured = self._config.train_distribute if key == ModeKeys.TRAIN else self._config.eval_distribute
            self._strategies[key] = resolve_strategy(self._use_tpu, configured, self._config.cluster,
                                                     self._config.master)
        return self._strategies[key]

    def _global_batch_size(self, mode: str) -> int | None:
        """The global batch for `mode`, or None when input_fn decides it (plain Estimator)."""
        return None

    def _input_params(self) -> dict:
        return dict(self._params)

    def _params_for_model_fn(self, params: dict, batch_size: int | None) -> dict:
        """The params dict model_fn receives (tf.estimator passes its params unchanged)."""
        return dict(params)

    def _distributed_dataset(self, runtime: Runtime, input_fn: Callable, mode: str):
        """input_fn's dataset, distributed: the global batch is split across replicas by tf.distribute."""
        dataset = call_input_fn(input_fn, mode=mode, params=self._input_params(), config=self._config)
        if mode == ModeKeys.TRAIN:
            split_element(dataset.element_spec)
            dims = {s.shape[0] for s in tf.nest.flatten(dataset.element_spec) if s.shape.rank}
            for dim in dims - {None}:
                per_replica_batch_size(dim, runtime.num_replicas, "input_fn's batch size")
        else:
            dataset = masked_stream(dataset, batch_size=0, static=False, split_partial=False)
        return runtime.strategy.experimental_distribute_dataset(dataset)

    def _model_fn_batch_size(self, mode: str, runtime: Runtime) -> int | None:
        return None

    # -- runtimes -------------------------------------------------------------------------------
    def _runtime(self, mode: str) -> Runtime:
        strategy = self._strategy(mode)
        runtime = self._runtimes.get(id(strategy))
        if runtime is None:
            runtime = Runtime(strategy, self._model_fn, self._params, self._config, self._static_shapes,
                              params_for_model_fn=self._params_for_model_fn)
            self._runtimes[id(strategy)] = runtime
        return runtime

    # -- checkpoints ------------------------------------------------------------------------------
    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint prefix in model_dir, or None."""
        return checkpoints.latest(self._model_dir)

    def get_variable_names(self) -> list[str]:
        """Names of the variables in the latest checkpoint (see checkpoints.py for the naming)."""
        return checkpoints.variable_names(self._require_checkpoint())

    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable `name` in the latest checkpoint."""
        return checkpoints.variable_value(self._require_checkpoint(), name)

    def _require_checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"Could not find a trained model (no checkpoint) in model_dir {self._model_dir!r}.")
        return path

    def _save(self, runtime: Runtime, step: int) -> None:
        """The chief writes the checkpoint; every worker waits until it is complete."""
        if is_chief(runtime.strategy):
            path = checkpoints.save(runtime.saved_variables(), self._model_dir, step, self._config.keep_checkpoint_max)
            logging.info("Saved checkpoint for step %d: %s", step, path)
        runtime.barrier()  # no worker reads model_dir before the chief's checkpoint is complete

    # -- train --------------------------------------------------------------------------------------
    def train(self, input_fn: Callable, hooks: Any = None, steps: int | None = None,
              max_steps: int | None = None, saving_listeners: Any = None) -> Estimator:
        """Trains until `steps` more steps, `max_steps` in all, or the end of input_fn's data."""
        _check_no_hooks(hooks, "train()")
        _check_no_hooks(saving_listeners, "saving_listeners")
        if steps is not None and max_steps is not None:
            raise ValueError(f"Set at most one of steps ({steps}) and max_steps ({max_steps}).")
        for name, value in (("steps", steps), ("max_steps", max_steps)):
            if value is not None and (not isinstance(value, int) or value <= 0):
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        latest = self.latest_checkpoint()
        start = checkpoints.global_step_of(latest) if latest else 0
        if max_steps is not None and start >= max_steps:
            logging.info("Skipping training: global step %d already reached max_steps=%d.", start, max_steps)
            return self
        target = max_steps if max_steps is not None else (start + steps if steps is not None else math.inf)

        runtime = self._runtime(ModeKeys.TRAIN)
        batch_size = self._model_fn_batch_size(ModeKeys.TRAIN, runtime)
        with paused_collection(collect_first=True), runtime.strategy.scope():
            iterator = self._train_input.iterator(
                input_fn, lambda: iter(self._distributed_dataset(runtime, input_fn, ModeKeys.TRAIN)))
            loop = runtime.train_loop(batch_size)
            loop.trace(iterator)
            self._restore_for_training(runtime, latest)
            self._train_loops(runtime, loop, iterator, target)
        return self

    def _restore_for_training(self, runtime: Runtime, latest: str | None) -> None:
        if latest:
            checkpoints.restore(latest, runtime.saved_variables())
            logging.info("Resumed from %s (global step %d).", latest, int(runtime.global_step.numpy()))
        elif self._warm_start_from:
            path = checkpoints.resolve_path(self._warm_start_from)
            model = {n: v for n, v in runtime.model_variables().items() if n != checkpoints.GLOBAL_STEP}
            checkpoints.restore(path, model, required=set())
            runtime.global_step.assign(0)
            logging.info("Warm-started model variables from %s.", path)
        else:
            runtime.global_step.assign(0)

    def _train_loops(self, runtime: Runtime, loop: Callable, iterator, target: float) -> None:
        """Runs compiled loops to `target`, reporting and checkpointing between them."""
        config = self._config
        per_loop = config.tpu_config.iterations_per_loop
        step = int(runtime.global_step.numpy())
        chief = is_chief(runtime.strategy)
        report = ProgressReport(
            step, config.log_step_count_steps, config.save_summary_steps, self._global_batch_size(ModeKeys.TRAIN),
            (lambda at, values: self._summaries.scalars("", at, values)) if chief else None,
        )
        schedule = CheckpointSchedule(step, config.save_checkpoints_steps, config.checkpoint_every_secs)
        while step < target:
            iterations = int(min(per_loop, target - step))
            started = time.monotonic()
            done, loss, learning_rate = loop(iterator, iterations)
            self._train_input.advanced(done, ended=done < iterations)
            step += done
            if done and not math.isfinite(loss):
                raise FloatingPointError(
                    f"Loss became {loss} at global step {step}; stopping without saving a checkpoint. "
                    "Lower the learning rate or check the input data."
                )
            ended = done < iterations
            if done:
                report.after_loop(step, done, time.monotonic() - started, loss, learning_rate,
                                  final=ended or step >= target)
            if done and schedule.due(step):
                self._save(runtime, step)
                schedule.saved(step)
            if ended:
                logging.info("input_fn's data ended at global step %d.", step)
                break
        if schedule.last_step != step or self.latest_checkpoint() is None:
            self._save(runtime, step)

    # -- evaluate --------------------------------------------------------------------------------------
    def evaluate(self, input_fn: Callable, steps: int | None = None, hooks: Any = None,
                 checkpoint_path: str | None = None, name: str | None = None) -> dict:
        """Exact metrics over input_fn's data (or `steps` batches), plus `loss` and `global_step`."""
        _check_no_hooks(hooks, "evaluate()")
        if steps is not None and (not isinstance(steps, int) or steps <= 0):
            raise ValueError(f"steps must be a positive integer or None, got {steps!r}.")
        path = checkpoints.resolve_path(checkpoint_path) if checkpoint_path else self.latest_checkpoint()
        if path is None:
            raise ValueError(
                f"Could not find a trained model in model_dir {self._model_dir!r}; train() first or "
                "pass checkpoint_path."
            )
        runtime = self._runtime(ModeKeys.EVAL)
        batch_size = self._model_fn_batch_size(ModeKeys.EVAL, runtime)
        _, trace = runtime.inference_loop(ModeKeys.EVAL, batch_size)
        loss_sum, count = 0.0, 0.0
        for result in self._inference(runtime, ModeKeys.EVAL, input_fn, batch_size, steps, path):
            loss_sum += result.loss_sum
            count += result.count
            runtime.update_host_metrics(trace, result.rows, result.mask)
        with runtime.strategy.scope():
            results = {key: _to_python(metric.result()) for key, metric in runtime.metric_objects(trace).items()}
        if count == 0:
            raise ValueError("Evaluation input_fn produced no examples.")
        results["loss"] = loss_sum / count
        results["global_step"] = int(runtime.global_step.numpy())
        subdir = f"eval_{name}" if name else "eval"
        scalars = {k: v for k, v in results.items() if k != "global_step" and np.ndim(v) == 0}
        if is_chief(runtime.strategy):
            self._summaries.scalars(subdir, results["global_step"], scalars)
        logging.info("Evaluation at global step %d: %s", results["global_step"], scalars)
        return results

    def _inference(self, runtime: Runtime, mode: str, input_fn: Callable, batch_size: int | None,
                   steps: int | None, path: str | None) -> Iterator[InferenceLoopResult]:
        """Runs the eval/predict loop over the input, yielding each loop's result.

        The strategy's scope is held only while TensorFlow runs, never across a yield: a caller
        may stop reading predictions half way without leaving a scope open. The global step is
        put back after every loop: only training moves it (a model_fn may touch it in any mode).
        """
        per_loop = self._config.tpu_config.iterations_per_loop
        remaining = steps if steps is not None else math.inf
        loop, trace = runtime.inference_loop(mode, batch_size)
        with paused_collection(collect_first=True), runtime.strategy.scope():
            iterator = iter(self._distributed_dataset(runtime, input_fn, mode))
            first_value = next(iterator)
            loop.trace(iterator, iterator.element_spec)
            self._restore_for_inference(runtime, path)
            step = runtime.global_step.read_value()
            for metric in runtime.metric_objects(trace).values():
                metric.reset_state()
        while remaining > 0:
            iterations = int(min(per_loop, remaining))
            with paused_collection(), runtime.strategy.scope():
                result = loop(iterator, first_value, iterations)
                runtime.global_step.assign(step)
                remaining -= result.steps
                more = not result.ended and remaining > 0
                first_value = next(iterator) if more else None
            yield result
            if not more:
                break

    def _restore_for_inference(self, runtime: Runtime, path: str | None) -> None:
        if path is None:
            logging.warning("Could not find a trained model in model_dir %s; predicting with freshly "
                            "initialised variables.", self._model_dir)
            return
        checkpoints.restore(path, runtime.model_variables(), required=set(runtime.model_variables()))
        optimizer = {n: v for n, v in runtime.saved_variables().items() if n not in runtime.model_variables()}
        checkpoints.restore(path, optimizer, required=set())

    # -- predict ----------------------------------------------------------------------------------------
    def predict(self, input_fn: Callable, predict_keys: list[str] | None = None, hooks: Any = None,
                checkpoint_path: str | None = None, yield_single_examples: bool = True) -> Iterator:
        """Yields model_fn's predictions for every example of input_fn's data, in input order."""
        _check_no_hooks(hooks, "predict()")
        path = checkpoints.resolve_path(checkpoint_path) if checkpoint_path else self.latest_checkpoint()
        runtime = self._runtime(ModeKeys.PREDICT)
        batch_size = self._model_fn_batch_size(ModeKeys.PREDICT, runtime)
        for result in self._inference(runtime, ModeKeys.PREDICT, input_fn, batch_size, None, path):
            yield from _split_predictions(result.rows, result.mask, predict_keys, yield_single_examples, batch_size)

    # -- export --------------------------------------------------------------------------------------------
    def export_saved_model(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                           assets_extra: dict | None = None, as_text: bool = False,
                           checkpoint_path: str | None = None) -> bytes:
        """Writes a SavedModel with a serving_default signature; returns its directory (bytes)."""
        from estimators.export.saved_model import export_saved_model

        path = checkpoints.resolve_path(checkpoint_path) if checkpoint_path else self._require_checkpoint()
        return export_saved_model(
            self._model_fn, self._params, self._config, path, export_dir_base, serving_input_receiver_fn,
            assets_extra=assets_extra, as_text=as_text,
        )


def _split_predictions(rows: Any, mask: tf.Tensor, keys: list[str] | None, single: bool,
                       batch_size: int | None) -> Iterator:
    """Real rows only, as one dict (or array) per example, or per input batch."""
    mask = np.asarray(mask)
    rows = tf.nest.map_structure(np.asarray, rows)
    if isinstance(rows, dict) and keys:
        missing = set(keys) - set(rows)
        if missing:
            raise ValueError(f"predict_keys {sorted(missing)} are not among the predictions {sorted(rows)}.")
        rows = {k: rows[k] for k in keys}
    chunk = batch_size or len(mask)
    for start in range(0, len(mask), max(chunk, 1)):
        keep = mask[start:start + chunk]
        if not keep.any():
            continue
        part = tf.nest.map_structure(lambda a, s=start, k=keep: a[s:s + chunk][k], rows)
        if not single:
            yield part
            continue
        for i in range(int(keep.sum())):
            yield tf.nest.map_structure(lambda a, i=i: a[i], part)
