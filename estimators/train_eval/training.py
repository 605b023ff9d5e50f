"""train_and_evaluate with tf.estimator 2.15's contract: TrainSpec, EvalSpec and the executor that runs a task.

`_TrainingExecutor.run()` picks the procedure from RunConfig's task type, as 2.15 did: no cluster ->
`run_local` (one train() whose saving listener evaluates new checkpoints, throttled, and once more at
the end); 'chief'/'worker' -> train only; 'master' -> train and evaluate; 'evaluator' -> evaluate each
new checkpoint the trainers write until max_steps; 'ps' -> serve. A task whose tf.distribute strategy
already runs this task's server (MultiWorkerMirroredStrategy) starts no second one.
Messages that 2.15 logged go to tf.compat.v1.logging, as there.
"""

from __future__ import annotations

import collections
import json
import os
import time
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from tensorflow.python.training import basic_session_run_hooks, server_lib

from estimators.distribute.tf_config import CHIEF, EVALUATOR, MASTER, WORKER
from estimators.train_eval.exporters import validate_exporters
from estimators.training.hooks import Hook, SavingListener
from estimators.training.preemption import EvaluationInterrupted, TrainingInterrupted

_GLOBAL_STEP = tf.compat.v1.GraphKeys.GLOBAL_STEP
_DELAY_SECS_PER_WORKER = 5  # worker i waits (i + 1) * 5 s, as 2.15 did (asynchronous training converges better)
_MAX_DELAY_SECS = 60
_TRAINER_JOBS = (CHIEF, MASTER, WORKER)


def _check_input_fn(input_fn: Any) -> None:
    if not callable(input_fn):
        raise TypeError(f"`input_fn` must be callable: pass the function that returns the data, given: {input_fn!r}")


def _checked_hooks(hooks: Any) -> tuple:
    """Training/evaluation hooks as a tuple: tf.compat.v1 SessionRunHooks or estimators.Hook objects."""
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, (tf.compat.v1.train.SessionRunHook, Hook)):
            raise TypeError(f"All hooks must be `SessionRunHook` instances (tf.compat.v1.train.SessionRunHook) or "
                            f"estimators.Hook objects, given: {hook!r}")
    return hooks


def _checked_listeners(listeners: Any) -> tuple:
    """Saving listeners as a tuple: tf.compat.v1 CheckpointSaverListeners or estimators.SavingListener objects."""
    listeners = tuple(listeners or ())
    for listener in listeners:
        if not isinstance(listener, (tf.compat.v1.train.CheckpointSaverListener, SavingListener)):
            raise TypeError(f"All saving_listeners must be `CheckpointSaverListener` instances "
                            f"(tf.compat.v1.train.CheckpointSaverListener) or estimators.SavingListener objects, "
                            f"given: {listener!r}")
    return listeners


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """How to train: input_fn, where to stop (None: the end of the input), hooks and saving listeners.

    Checked when made, as tf.estimator 2.15 checked it (hooks and listeners become tuples).
    """

    def __new__(cls, input_fn: Callable, max_steps: int | None = None, hooks: Any = None,
                saving_listeners: Any = None) -> TrainSpec:
        _check_input_fn(input_fn)
        if max_steps is not None and (not _is_number(max_steps) or max_steps <= 0):
            raise ValueError(f"Must specify max_steps > 0 (a positive integer, or None to train to the end of the "
                             f"input), given: {max_steps!r}")
        return super().__new__(cls, input_fn, max_steps, _checked_hooks(hooks), _checked_listeners(saving_listeners))


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"])):
    """How to evaluate: input_fn, batches per evaluation (None: all), exporters, and how often.

    An evaluation follows a checkpoint save at most every `throttle_secs` seconds (tf.estimator's
    default 600; 0 evaluates every checkpoint), and one follows the end of training.
    `start_delay_secs` delays the first evaluation of a TF_CONFIG 'evaluator' task, as in tf.estimator.
    Checked when made, as tf.estimator 2.15 checked it (exporters become a tuple with distinct names).
    """

    def __new__(cls, input_fn: Callable, steps: int | None = 100, name: str | None = None, hooks: Any = None,
                exporters: Any = None, start_delay_secs: float = 120, throttle_secs: float = 600) -> EvalSpec:
        _check_input_fn(input_fn)
        if steps is not None and (not _is_number(steps) or steps <= 0):
            raise ValueError(f"Must specify steps > 0 (batches per evaluation, or None for the whole input), "
                             f"given: {steps!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string (the evaluation's folder eval_<name>) or None, given: {name!r}")
        hooks = _checked_hooks(hooks)
        exporters = validate_exporters(exporters)
        for what, value in (("start_delay_secs", start_delay_secs), ("throttle_secs", throttle_secs)):
            if not _is_number(value) or value < 0:
                raise ValueError(f"Must specify {what} >= 0 (a number of seconds), given: {value!r}")
        return super().__new__(cls, input_fn, steps, name, hooks, exporters, start_delay_secs, throttle_secs)


def _assert_eval_spec(eval_spec: Any) -> None:
    """TypeError unless eval_spec is an EvalSpec."""
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec` (estimators.EvalSpec). Got: "
                        f"{type(eval_spec)}")


def train_and_evaluate(estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec) -> Any:
    """Trains and evaluates as RunConfig's task says (see `_TrainingExecutor.run`).

    Locally (and as an 'evaluator' task): returns (the last evaluation's metrics, the export results).
    """
    _assert_eval_spec(eval_spec)  # fail fast, before anything runs
    executor = _TrainingExecutor(estimator=estimator, train_spec=train_spec, eval_spec=eval_spec)
    config = estimator.config
    if config.task_type == EVALUATOR and config.task_id > 0:
        raise ValueError(f"For distributed training, there can only be one `evaluator` task (with task id 0). "
                         f"Given task id {config.task_id}: a cluster takes one evaluator, with index 0.")
    return executor.run()


class _StopAtSecsHook(tf.compat.v1.train.SessionRunHook):
    """Requests a stop once `stop_after_secs` seconds have passed since begin()."""

    def __init__(self, stop_after_secs: float):
        self._stop_after_secs = stop_after_secs
        self._start_time: float | None = None

    def begin(self) -> None:
        self._start_time = time.time()

    def after_run(self, run_context: Any, run_values: Any) -> None:
        del run_values
        if time.time() - self._start_time >= self._stop_after_secs:
            run_context.request_stop()


class _EvalStatus:
    """What one attempt to evaluate found: a new checkpoint (evaluated), none yet, or none newer."""

    EVALUATED = "evaluated"
    MISSING_CHECKPOINT = "missing checkpoint"
    NO_NEW_CHECKPOINT = "no new checkpoint"


class _EvalResult(collections.namedtuple("EvalResult", ["status", "metrics", "checkpoint_path"])):
    """One evaluation attempt: its status and, when EVALUATED, the metrics and the checkpoint evaluated."""

    def __new__(cls, status: str, metrics: dict | None = None, checkpoint_path: str | None = None) -> _EvalResult:
        if status != _EvalStatus.EVALUATED:
            if metrics or checkpoint_path:
                raise ValueError(f"metrics and checkpoint_path must be `None` if status is not "
                                 f"{_EvalStatus.EVALUATED}; got status {status}, metrics {metrics}, checkpoint_path "
                                 f"{checkpoint_path}")
            return super().__new__(cls, status, metrics, checkpoint_path)
        if not metrics:
            raise ValueError("Internal error: `Estimator.evaluate` should never return empty metrics.")
        if not isinstance(metrics, dict):
            raise TypeError(f"`Estimator.evaluate` should return dict. Given {type(metrics)}.")
        if _GLOBAL_STEP not in metrics:
            raise ValueError(f"Internal error: `Estimator.evaluate` result should have `global_step` in result. "
                             f"Given {metrics}")
        if not checkpoint_path:
            raise ValueError("Internal error: `checkpoint_path` should never be empty.")
        return super().__new__(cls, status, metrics, checkpoint_path)


class _ContinuousEvalListener:
    """Called around each evaluation of train_and_evaluate; return False from either method to stop evaluating."""

    def before_eval(self) -> bool:
        """False skips this evaluation and ends the evaluation loop (and training, locally)."""
        return True

    def after_eval(self, eval_result: _EvalResult) -> bool:
        """False ends the evaluation loop (and training, locally) after this `eval_result`."""
        del eval_result
        return True


class _NewCheckpointListenerForEvaluate(SavingListener):
    """Evaluates (and exports) after checkpoint saves, at most every `eval_throttle_secs`, and at the end.

    The first save of a train() call at the step training started from (the graph path saves the
    starting state, as 2.15 did) is not evaluated: nothing was trained since. Called by the engine as
    after_save(step, path) and end(step), or with tf.compat.v1's keywords (session=, global_step_value=).
    A signal during an evaluation (EvaluationInterrupted) ends train() as one during a step does:
    TrainingInterrupted for the checkpoint just saved.
    """

    def __init__(self, evaluator: Any, eval_throttle_secs: float, continuous_eval_listener: _ContinuousEvalListener):
        self._evaluator = evaluator
        self._eval_throttle_secs = eval_throttle_secs
        self._continuous_eval_listener = continuous_eval_listener
        self.eval_result: _EvalResult | None = None
        self.export_results: list | None = None

    def begin(self) -> None:
        # Looked up when training begins, so that the timer class is tf.compat.v1's as the program sees it.
        self._timer = basic_session_run_hooks.SecondOrStepTimer(every_secs=self._eval_throttle_secs)
        self._is_first_run = True
        self._start_step = _checkpoint_step(getattr(self._evaluator, "model_dir", None))

    def after_save(self, step: int | None = None, path: str | None = None, *, session: Any = None,
                   global_step_value: int | None = None) -> bool | None:
        del path, session
        step = global_step_value if global_step_value is not None else step
        if self._is_first_run:
            self._is_first_run = False
            if step is None or step <= self._start_step:
                return None  # the state training started from: nothing trained yet
        if not self._continuous_eval_listener.before_eval():
            tf.compat.v1.logging.info("Exiting training and evaluation loop, as requested by "
                                      "_ContinuousEvalListener.before_eval.")
            return True
        if self._timer.should_trigger_for_step(step):
            self._evaluate(step)
            if not self._continuous_eval_listener.after_eval(self.eval_result):
                tf.compat.v1.logging.info("Exiting evaluation, as requested by _ContinuousEvalListener.after_eval.")
                return True
        else:
            tf.compat.v1.logging.info(f"Skip the current checkpoint eval due to throttle secs "
                                      f"({self._eval_throttle_secs} secs).")
        return None

    def end(self, step: int | None = None, *, session: Any = None, global_step_value: int | None = None) -> None:
        del session
        step = global_step_value if global_step_value is not None else step
        if step != self._timer.last_triggered_step() and self._continuous_eval_listener.before_eval():
            self._evaluate(step)
            self._continuous_eval_listener.after_eval(self.eval_result)

    def _evaluate(self, step: int | None) -> None:
        self._timer.update_last_triggered_step(step)
        try:
            self.eval_result, self.export_results = self._evaluator.evaluate_and_export()
        except EvaluationInterrupted as stopped:  # the checkpoint is saved: train() ends as on a signal in a step
            raise TrainingInterrupted(stopped.signal_name, stopped.step, stopped.checkpoint) from None
        if self.eval_result.status != _EvalStatus.EVALUATED:
            raise RuntimeError(f"There was no new checkpoint after the training. Eval status: "
                               f"{self.eval_result.status}")


def _checkpoint_step(model_dir: Any) -> int:
    """The global step of model_dir's latest checkpoint (0 when there is none, or model_dir is not a path)."""
    if not isinstance(model_dir, str | bytes) or not model_dir:
        return 0
    latest = tf.train.latest_checkpoint(tf.compat.as_str_any(model_dir))
    if not latest:
        return 0
    suffix = latest.rpartition("-")[2]
    return int(suffix) if suffix.isdigit() else 0


def _is_google_env() -> bool:
    """Whether TF_CONFIG says the cluster manager starts the servers ({'environment': 'google'})."""
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    if not tf_config:
        tf.compat.v1.logging.warn("TF_CONFIG should not be empty in distributed environment.")
    return tf_config.get("environment") == "google"


def _runs_own_server(estimator: Any) -> bool:
    """Whether a tf.distribute strategy of the estimator already serves this task (MultiWorkerMirroredStrategy
    starts the task's server when made; a second server on the same address could not start)."""
    from estimators.distribute.strategy import spans_workers

    config = estimator.config
    strategies = [getattr(config, "train_distribute", None), getattr(config, "eval_distribute", None)]
    strategies += list((getattr(estimator, "_strategies", None) or {}).values())
    return any(isinstance(s, tf.distribute.Strategy) and spans_workers(s) for s in strategies)


class _TrainingExecutor:
    """Runs train_and_evaluate's procedure for this task: run_local, run_chief, run_worker, run_master,
    run_evaluator or run_ps (`run()` picks it from RunConfig's task type)."""

    def __init__(self, estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec | None, train_hooks: Any = None,
                 continuous_eval_listener: _ContinuousEvalListener | None = None):
        from estimators.estimator import Estimator

        if not isinstance(estimator, Estimator):
            raise TypeError(f"`estimator` must have type `tf.estimator.Estimator` (estimators.Estimator or "
                            f"TPUEstimator). Got: {type(estimator)}")
        if not isinstance(train_spec, TrainSpec):
            raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec` (estimators.TrainSpec). Got: "
                            f"{type(train_spec)}")
        if eval_spec and not isinstance(eval_spec, EvalSpec):
            raise TypeError(f"`eval_spec` must be either `None` or have type `tf.estimator.EvalSpec` "
                            f"(estimators.EvalSpec). Got: {type(eval_spec)}")
        if continuous_eval_listener and not isinstance(continuous_eval_listener, _ContinuousEvalListener):
            raise TypeError("`continuous_eval_listener` must have type `_ContinuousEvalListener`.")
        self._estimator, self._train_spec, self._eval_spec = estimator, train_spec, eval_spec
        self._train_hooks = _checked_hooks(train_hooks)
        self._continuous_eval_listener = continuous_eval_listener or _ContinuousEvalListener()

    @property
    def estimator(self) -> Any:
        return self._estimator

    def run(self) -> Any:
        """Runs `run_<task type>`; without a cluster (and not an evaluator), `run_local`."""
        config = self._estimator.config
        if not config.cluster_spec and config.task_type != EVALUATOR:
            tf.compat.v1.logging.info("Running training and evaluation locally (non-distributed).")
            return self.run_local()
        if not config.task_type:
            raise ValueError("`estimator.config` must have task_type set. This usually means TF_CONFIG environment "
                             "is not set correctly: set its 'task' to {'type': ..., 'index': ...}.")
        if config.task_type == "local":
            raise ValueError("`task.type` in TF_CONFIG cannot be `local`. Leaving `cluster` and `task` properties in "
                             "TF_CONFIG absent triggers train and evaluate `Estimator` locally (non-distributed).")
        available = [name for name in dir(self)
                     if name.startswith("run_") and name != "run_local" and callable(getattr(self, name))]
        task_to_run = "run_" + config.task_type
        if task_to_run not in available:
            raise ValueError(f"Task type {config.task_type} is not supported. Supported task types are "
                             f"{[name[len('run_'):] for name in available]}")
        return getattr(self, task_to_run)()

    def run_chief(self) -> None:
        """Trains (the chief's saving listeners run); evaluation is the evaluator task's."""
        return self._start_distributed_training(saving_listeners=self._train_spec.saving_listeners)

    def run_worker(self) -> None:
        """Trains, after a delay that grows with the task index."""
        return self._start_distributed_training()

    def run_master(self) -> None:
        """Trains and evaluates new checkpoints (a 'master' cluster has no evaluator task)."""
        _assert_eval_spec(self._eval_spec)
        self._check_checkpoints_saved()
        evaluator = _TrainingExecutor._Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        listener = _NewCheckpointListenerForEvaluate(evaluator, self._eval_spec.throttle_secs,
                                                     _ContinuousEvalListener())
        self._start_distributed_training(saving_listeners=self._train_spec.saving_listeners + (listener,))

    def run_evaluator(self) -> tuple[dict | None, list]:
        """Evaluates each new checkpoint the trainers write until one reaches max_steps."""
        return self._start_continuous_evaluation()

    def run_ps(self) -> None:
        """Serves as a parameter server until the process is ended."""
        server = self._start_std_server(self._estimator.config)
        server.join()

    def run_local(self) -> tuple[dict | None, list | None]:
        """One train() whose saving listener evaluates (and exports) new checkpoints; returns the last evaluation's
        metrics and the export results."""
        _assert_eval_spec(self._eval_spec)
        self._check_checkpoints_saved()
        config = self._estimator.config
        tf.compat.v1.logging.info(
            f"Start train and evaluate loop. The evaluate will happen after every checkpoint. Checkpoint frequency "
            f"is determined based on RunConfig arguments: save_checkpoints_steps {config.save_checkpoints_steps} or "
            f"save_checkpoints_secs {config.save_checkpoints_secs}.")
        evaluator = _TrainingExecutor._Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        listener = _NewCheckpointListenerForEvaluate(evaluator, self._eval_spec.throttle_secs,
                                                     self._continuous_eval_listener)
        self._estimator.train(input_fn=self._train_spec.input_fn, max_steps=self._train_spec.max_steps,
                              hooks=list(self._train_spec.hooks) + list(self._train_hooks),
                              saving_listeners=self._train_spec.saving_listeners + (listener,))
        result = listener.eval_result or _EvalResult(status=_EvalStatus.MISSING_CHECKPOINT)
        return result.metrics, listener.export_results

    def _check_checkpoints_saved(self) -> None:
        """Evaluation follows checkpoint saves: a RunConfig that disables checkpoints cannot evaluate."""
        config = self._estimator.config
        if getattr(config, "save_checkpoints_steps", 0) is None and getattr(config, "save_checkpoints_secs", 0) is None:
            raise ValueError("There should be a CheckpointSaverHook to use saving_listeners: train_and_evaluate "
                             "evaluates after each checkpoint, but RunConfig disables checkpoints "
                             "(save_checkpoints_steps and save_checkpoints_secs are both None). Set one of them.")

    def _start_std_server(self, config: Any) -> Any:
        """Starts this task's tf.distribute server, as TF_CONFIG describes it; None for a one-node cluster."""
        if not config.cluster_spec or not config.task_type or config.task_id is None:
            raise RuntimeError("Could not start server; be sure to specify cluster_spec, task_type, and task in "
                               "RunConfig or set the TF_CONFIG environment variable.")
        if not config.master:
            jobs = config.cluster_spec.jobs
            if len(jobs) == 1 and len(config.cluster_spec.job_tasks(jobs[0])) == 1 \
                    and config.task_type in _TRAINER_JOBS:
                tf.compat.v1.logging.info("Skip starting Tensorflow server as there is only one node in the cluster.")
                return None
            raise RuntimeError("Could not start server; be sure to specify master in RunConfig or set the TF_CONFIG "
                               "environment variable.")
        tf.compat.v1.logging.info("Start Tensorflow server.")
        gpu_options = config.session_config.gpu_options if config.session_config is not None else None
        session_config = tf.compat.v1.ConfigProto(log_device_placement=False, gpu_options=gpu_options)
        server = server_lib.Server(config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
                                   config=session_config, start=False, protocol=config.protocol)
        server.start()
        return server

    def _start_distributed_training(self, saving_listeners: tuple | None = None) -> None:
        config = self._estimator.config
        # The server starts before the delay: otherwise the other tasks wait for this one before training.
        if not _is_google_env() and not _runs_own_server(self._estimator):
            self._start_std_server(config)
        start_delay_secs = 0
        if config.task_type == WORKER:
            max_delay_secs = _MAX_DELAY_SECS
            if config.experimental_max_worker_delay_secs is not None:
                max_delay_secs = int(config.experimental_max_worker_delay_secs)
            start_delay_secs = min(max_delay_secs, (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
        if start_delay_secs > 0:
            tf.compat.v1.logging.info("Waiting %d secs before starting training.", start_delay_secs)
            time.sleep(start_delay_secs)
        self._estimator.train(input_fn=self._train_spec.input_fn, max_steps=self._train_spec.max_steps,
                              hooks=list(self._train_spec.hooks) + list(self._train_hooks),
                              saving_listeners=saving_listeners)

    def _start_continuous_evaluation(self) -> tuple[dict | None, list]:
        _assert_eval_spec(self._eval_spec)
        start_delay_secs = self._eval_spec.start_delay_secs
        if start_delay_secs:
            tf.compat.v1.logging.info("Waiting %f secs before starting eval.", start_delay_secs)
            time.sleep(start_delay_secs)
        evaluator = _TrainingExecutor._Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        latest: _EvalResult | None = None
        exports: list = []
        while True:
            if latest is not None and latest.status == _EvalStatus.EVALUATED:
                global_step = latest.metrics.get(_GLOBAL_STEP)
                max_steps = self._train_spec.max_steps
                if global_step and max_steps and global_step >= max_steps:
                    tf.compat.v1.logging.info("Exiting evaluation, global_step=%s >= train max_steps=%s",
                                              global_step, max_steps)
                    return latest.metrics, exports
            result, result_exports, stop = self._execute_evaluator_once(
                evaluator, self._continuous_eval_listener, self._eval_spec.throttle_secs)
            if result is not None and result.status == _EvalStatus.EVALUATED:
                latest, exports = result, result_exports
            if stop:
                return (latest.metrics if latest else None), exports

    def _execute_evaluator_once(self, evaluator: Any, continuous_eval_listener: _ContinuousEvalListener,
                                throttle_secs: float) -> tuple[_EvalResult | None, list, bool]:
        """One evaluation attempt, then the wait for throttle_secs; (result, exports, whether to stop)."""
        start = time.time()
        if not continuous_eval_listener.before_eval():
            tf.compat.v1.logging.info("Exiting evaluation, as requested by _ContinuousEvalListener.before_eval.")
            return None, [], True
        result, exports = evaluator.evaluate_and_export()
        if not continuous_eval_listener.after_eval(result):
            tf.compat.v1.logging.info("Exiting evaluation, as requested by _ContinuousEvalListener.after_eval.")
            return result, exports, True
        difference = throttle_secs - (time.time() - start)
        if difference > 0:
            tf.compat.v1.logging.info("Waiting %f secs before starting next eval run.", difference)
            time.sleep(difference)
        elif throttle_secs == 0 and result.status != _EvalStatus.EVALUATED:
            tf.compat.v1.logging.warning("EvalSpec.throttle_secs is set as 0. This might overload the job before "
                                         "finding (next) new checkpoint. Please consider to increase it.")
        return result, exports, False

    class _Evaluator:
        """Evaluates the latest checkpoint (when it is new) and runs the exporters on it."""

        def __init__(self, estimator: Any, eval_spec: EvalSpec, max_training_steps: int | None):
            _assert_eval_spec(eval_spec)
            self._estimator, self._eval_spec = estimator, eval_spec
            self._is_final_export_triggered = False
            self._previous_ckpt_path: str | None = None
            self._last_warning_time = 0.0
            self._max_training_steps = max_training_steps

        @property
        def model_dir(self) -> Any:
            return self._estimator.model_dir

        @property
        def is_final_export_triggered(self) -> bool:
            return self._is_final_export_triggered

        def evaluate_and_export(self) -> tuple[_EvalResult, list]:
            """(_EvalResult, export results): MISSING_CHECKPOINT / NO_NEW_CHECKPOINT without evaluating, or
            EVALUATED with the metrics and each exporter's result."""
            latest = self._estimator.latest_checkpoint()
            if not latest:
                self._log_err_msg("Estimator is not trained yet. Will start an evaluation when a checkpoint is ready.")
                return _EvalResult(status=_EvalStatus.MISSING_CHECKPOINT), []
            if latest == self._previous_ckpt_path:
                self._log_err_msg("No new checkpoint ready for evaluation. Skip the current evaluation pass as "
                                  "evaluation results are expected to be same for the same checkpoint.")
                return _EvalResult(status=_EvalStatus.NO_NEW_CHECKPOINT), []
            latest, metrics = self._evaluate(latest)
            result = _EvalResult(status=_EvalStatus.EVALUATED, metrics=metrics, checkpoint_path=latest)
            final = bool(self._max_training_steps) and result.metrics[_GLOBAL_STEP] >= self._max_training_steps
            exports = self._export_eval_result(result, final)
            if final:
                self._is_final_export_triggered = True
            self._last_warning_time = 0.0
            self._previous_ckpt_path = latest
            return result, exports

        def _evaluate(self, latest: str) -> tuple[str, dict]:
            """(checkpoint evaluated, metrics): `latest`, or the newest one when a trainer beside this evaluator
            rotated `latest` away before it was read (keep_checkpoint_max), as continuous evaluation did."""

            def evaluate(path: str) -> tuple[str, dict]:
                return path, self._estimator.evaluate(input_fn=self._eval_spec.input_fn, steps=self._eval_spec.steps,
                                                      name=self._eval_spec.name, checkpoint_path=path,
                                                      hooks=self._eval_spec.hooks)

            checkpointer = getattr(self._estimator, "_checkpointer", None)
            return evaluate(latest) if checkpointer is None else checkpointer.read_newest(evaluate, chosen=latest)

        def _log_err_msg(self, message: str) -> None:
            """Warns `message` at most every 10 minutes."""
            now = time.time()
            if now - self._last_warning_time > 600:
                tf.compat.v1.logging.warning(message)
                self._last_warning_time = now

        def _export_eval_result(self, eval_result: _EvalResult, is_the_final_export: bool) -> list:
            base = os.path.join(tf.compat.as_str_any(self._estimator.model_dir), "export")
            return [exporter.export(estimator=self._estimator,
                                    export_path=os.path.join(base, tf.compat.as_str_any(exporter.name)),
                                    checkpoint_path=eval_result.checkpoint_path, eval_result=eval_result.metrics,
                                    is_the_final_export=is_the_final_export)
                    for exporter in self._eval_spec.exporters]
