"""Estimator: runs model_fn/input_fn pairs under tf.distribute with tf.estimator's contract.

A thin shell: the runtime (runtime/) runs model_fn, the controller (training/controller.py) runs
the outer training loop, the Checkpointer (checkpoint/) owns model_dir's checkpoints.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from estimators import log as logging
from estimators import path_choice
from estimators.checkpoint import mapping, warm_start
from estimators.checkpoint.checkpointer import Checkpointer, checkpoint_at
from estimators.checkpoint.lock import ModelDirLock
from estimators.checkpoint.model_dir_check import check_model_dir
from estimators.compat import guards  # noqa: F401 - registers the engine's guards before any call
from estimators.compat.fn_args import bound_model_fn, model_fn_args
from estimators.compat.input_fn_call import call_input_fn, dataset_of_call
from estimators.compat.random_seed import seeded_entry_point, seeded_generator
from estimators.distribute.inputs import masked_stream
from estimators.distribute.strategy import (
    is_chief,
    is_tpu_strategy,
    local_replicas,
    multi_worker_strategy,
    resolve_strategy,
)
from estimators.graph import evaluate as graph_evaluate
from estimators.graph import export as graph_export
from estimators.graph import predict as graph_predict
from estimators.graph import replicated
from estimators.graph import train as graph_train
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig, TaskType, with_session_config
from estimators.runtime.collection import Held, free_in_background, keep_until_safe, safe_point, track
from estimators.runtime.predictions import split_predictions
from estimators.runtime.state import Runtime
from estimators.runtime.train_input import StartingOverAtItsEnd, TrainInput
from estimators.training import eval_summaries
from estimators.training.controller import SIGNAL, TrainController, TrainPlan
from estimators.training.hooks import Hook, SavingListener, checked_hooks
from estimators.training.iterations import IterationsPerLoop
from estimators.training.logging_hook import fetch_names
from estimators.training.loops import InferenceLoopResult
from estimators.training.preemption import (
    EvaluationInterrupted,
    StopRequest,
    TrainingInterrupted,
    stopping_on_signals,
)
from estimators.training.progress import CheckpointSchedule, ProgressReport
from estimators.training.progress_display import ProgressDisplay
from estimators.training.step_summaries import StepSummaries
from estimators.training.summaries import SummaryWriters

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")  # what model_fn may take, by name
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


def _load_global_step_from_checkpoint_dir(checkpoint_dir: str) -> int:
    """The global step of the newest complete checkpoint in checkpoint_dir, 0 without one (2.15's private helper,
    which public TPUEstimator programs call)."""
    try:
        checkpointer = Checkpointer(os.fsdecode(checkpoint_dir), is_chief=False)
        latest = checkpointer.latest()
        return checkpointer.global_step(latest) if latest else 0
    except (ValueError, RuntimeError, tf.errors.OpError):
        return 0


def _master_with_workers(config: RunConfig) -> bool:
    """Whether TF_CONFIG's cluster has a 'master' job and 'worker' tasks: 2.15's between-graph training, which
    MultiWorkerMirroredStrategy cannot run (it refuses a 'master' job)."""
    jobs = config.cluster_spec.jobs
    return TaskType.MASTER in jobs and TaskType.WORKER in jobs


def _begun(items: Iterator) -> Iterator:
    """`items` with its first one made now (so the TF2 path's GraphPathNeeded is raised here, before any yield)."""
    try:
        first = next(items)
    except StopIteration:
        return iter(())
    return itertools.chain([first], items)


def _warn_not_finite(results: dict) -> None:
    """tf.estimator returned NaN metrics without a word; they are still returned, but said out loud."""
    bad = sorted(k for k, v in results.items() if isinstance(v, float) and not math.isfinite(v))
    if bad:
        logging.warning("Evaluation at global step %d gave non-finite %s: the eval data or the model's weights hold "
                        "NaN or Inf (check the input_fn's features; a diverged model has NaN weights).",
                        results["global_step"], ", ".join(f"{k}={results[k]}" for k in bad))


# Members a subclass may replace (2.15's list; the others are the engine's).
_OVERRIDABLE = frozenset({
    "model_fn", "_create_and_assert_global_step", "_export_all_saved_models", "_tf_api_names", "_tf_api_names_v1",
    "_estimator_api_names", "_estimator_api_names_v1", "_estimator_api_constants", "_estimator_api_constants_v1",
    "latest_checkpoint", "_assert_members_are_not_overridden",
})


class Estimator:
    """Trains, evaluates and predicts with a model_fn on the CPU, one or many GPUs."""

    def __init__(self, model_fn: Callable, model_dir: str | None = None, config: RunConfig | None = None,
                 params: dict | None = None, warm_start_from: Any = None):
        type(self)._assert_members_are_not_overridden(self)
        if config is not None and not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig` (estimators.RunConfig), got "
                             f"{type(config).__name__}.")
        if not callable(model_fn):
            raise ValueError(f"model_fn must be callable, got {type(model_fn).__name__}.")
        self._verify_model_fn_args(model_fn, params)
        config = config if config is not None else RunConfig()
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(
                f"`model_dir` are set both in constructor and `RunConfig`, but with different values. In "
                f"constructor: {model_dir!r}, in `RunConfig`: {config.model_dir!r}. Set one of them."
            )
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp(prefix="estimator_model_dir_")
            logging.warning("No model_dir given; using temporary folder %s.", model_dir)
        self._model_dir = str(model_dir)
        # A config that already names model_dir is kept as given (it may be a subclass computing model_dir).
        self._config = config if config.model_dir == self._model_dir else config.replace(model_dir=self._model_dir)
        self._config = with_session_config(self._config)
        self._session_config = self._config.session_config  # 2.15's attribute: the config's, or its default
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(f"params must be a dict of name -> value (model_fn receives it), got "
                            f"{type(params).__name__} {params!r:.60}: pass params={{'learning_rate': 0.1, ...}}.")
        self._params = dict(params or {})
        self._model_fn = model_fn
        self._warm_start = warm_start.settings_from(warm_start_from)
        self._warm_start_settings = self._warm_start  # 2.15's name for it
        self._strategies: dict[str, tf.distribute.Strategy] = {}
        if config.train_distribute is None and not self._use_tpu and not _master_with_workers(config):
            # Before any TensorFlow op: collectives can only be configured at program start.
            workers = multi_worker_strategy()
            if workers is not None:
                self._strategies[ModeKeys.TRAIN] = workers
        self._checkpointer = Checkpointer(self._model_dir, config.keep_checkpoint_max)
        self._runtimes: dict[int, Runtime] = {}
        track(self)  # counted until freed: engine calls collect garbage when enough have died (runtime/collection)
        self._train_input = TrainInput(self)
        self._stop = StopRequest()
        self._input_position_variable: tf.Variable | None = None
        self._execution: str | None = None  # the path model_fn runs on once the program has shown it
        self._graph_reason = ""  # why it is the graph path
        self._summaries = SummaryWriters(self._model_dir)
        self._step_summaries_made: dict[Runtime, StepSummaries] = {}

    def _assert_members_are_not_overridden(self) -> None:
        """2.15's rule: a subclass configures an Estimator (its __init__) but does not replace its members, which
        the engine calls. TPUEstimator is exempt; a subclass may override this method to opt out, as in 2.15."""
        if type(self).__name__ == "TPUEstimator":
            return
        own = set(vars(type(self))) - _OVERRIDABLE
        replaced = sorted(name for name in own if not name.startswith("__") and hasattr(Estimator, name)
                          and getattr(Estimator, name) is not vars(type(self))[name])
        if replaced:
            raise ValueError(f"Subclasses of Estimator cannot override members of Estimator. {type(self)} does "
                             f"override {replaced}: pass a model_fn (and params) instead, or wrap the Estimator.")

    def _verify_model_fn_args(self, model_fn: Callable, params: dict | None) -> None:
        """2.15's checks of model_fn's arguments when the Estimator is made (verify_model_fn_args), with its
        phrases: an argument the engine cannot fill, and params given to a model_fn that cannot take them."""
        try:
            args = model_fn_args(model_fn)
        except ValueError as err:
            unexpected = [p.name for p in inspect.signature(model_fn).parameters.values()
                          if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.default is p.empty
                          and p.name not in _MODEL_FN_ARGS]
            if unexpected:
                raise ValueError(f"model_fn ({model_fn!r}) has following not expected args: {unexpected}. "
                                 f"{err}") from None
            raise
        if params is not None and "params" not in args:
            raise ValueError(f"model_fn ({model_fn!r}) does not include params argument, but params ({params!r:.80}) "
                             f"are passed to Estimator: add a `params` argument to model_fn, or leave params out.")

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
        """model_fn as 2.15 exposed it: a call of `(features, labels, mode, config)` with this Estimator's params
        bound, so another Estimator (or add_metrics) can wrap it whatever arguments the original takes."""

        def public_model_fn(features, labels, mode, config):
            args = model_fn_args(self._model_fn)
            return bound_model_fn(self._model_fn, args, features, labels, mode, dict(self._params), config)()

        return public_model_fn

    @property
    def _engine_model_fn(self) -> Callable:
        """The model_fn the engine calls (with the arguments it declares)."""
        return self._model_fn

    # -- which path runs model_fn ------------------------------------------------------------------
    def _path(self, *hook_groups: Any) -> str:
        """This call's path (estimators/graph/path_choice.py); once the program needs the graph path, it stays there."""
        chosen, reason = path_choice.requested_path(self._config, *hook_groups)
        if chosen == path_choice.GRAPH:
            self._use_graph_path(reason)
        return chosen or self._execution or path_choice.TF2

    def _on_path(self, tf2: Callable[[], Any], graph: Callable[[], Any], *hook_groups: Any) -> Any:
        """The one path choice of every entry point: tf2() on the TF2 path, unless model_fn shows (GraphPathNeeded,
        before any step runs or anything is written) that it needs a session; graph() then, and on every later call."""
        if self._path(*hook_groups) == path_choice.TF2:
            try:
                return tf2()
            except path_choice.GraphPathNeeded as needed:
                self._use_graph_path(needed.reason)
        return graph()

    def _use_graph_path(self, reason: str) -> None:
        if self._execution == path_choice.GRAPH:
            return
        if self._config.execution == path_choice.TF2:
            raise path_choice.pinned_to_tf2(reason)
        self._check_graph_path()
        logging.info("model_fn runs on the graph path (tf.Graph and sessions, as tf.estimator ran it): %s.", reason)
        self._execution, self._graph_reason = path_choice.GRAPH, reason

    def _check_graph_path(self) -> None:
        """What the graph path cannot run, refused with the way out."""
        strategies = [self._config.train_distribute, self._config.eval_distribute, *self._strategies.values()]
        for strategy in strategies:
            why = replicated.unsupported(strategy)
            if why is not None:
                raise ValueError(
                    "This model_fn needs the graph path (tf.Graph and sessions: Scaffolds, SessionRunHooks, "
                    f"init_from_checkpoint or eager execution disabled), which cannot replicate it with {why}. "
                    "Use MirroredStrategy, drop train_distribute/eval_distribute (or TF_CONFIG's workers), or write "
                    "model_fn for the TF2 path.")

    def _graph_strategy(self, mode: str) -> tf.distribute.Strategy | None:
        """The strategy the graph path replicates `mode` with, as tf.estimator 2.15: train_distribute for TRAIN,
        eval_distribute (never train's) for EVAL, none for PREDICT and exports."""
        return {ModeKeys.TRAIN: self._config.train_distribute, ModeKeys.EVAL: self._config.eval_distribute}.get(mode)

    def _graph_input_params(self, mode: str) -> dict:
        """input_fn's params on the graph path (one device): tf.estimator passes its params unchanged."""
        return self._input_params()

    def _graph_model_fn_params(self, mode: str, export: bool = False) -> dict:
        """model_fn's params on the graph path (one device; `export`: in the serving graph)."""
        return dict(self._params)

    @property
    def _input_position(self) -> tf.Variable:
        """The train stream's position as a variable for checkpoints; made when the TF2 path first trains."""
        if self._input_position_variable is None:
            with tf.init_scope():
                self._input_position_variable = tf.Variable(0, dtype=tf.int64, trainable=False,
                                                            name="input_position")
        return self._input_position_variable

    # -- what subclasses change ---------------------------------------------------------------
    _use_tpu = False
    _static_shapes = False

    def _strategy(self, mode: str) -> tf.distribute.Strategy:
        """The strategy for `mode`, made once: eval and predict share train's unless eval_distribute is set."""
        key = ModeKeys.TRAIN if mode == ModeKeys.TRAIN or self._config.eval_distribute is None else ModeKeys.EVAL
        if key not in self._strategies:
            configured = self._config.train_distribute if key == ModeKeys.TRAIN else self._config.eval_distribute
            strategy = resolve_strategy(self._use_tpu, configured, self._config.cluster, self._config.master,
                                        num_gpus=self._config.num_gpus)
            if not self._static_shapes and is_tpu_strategy(strategy):
                raise ValueError(
                    "A plain Estimator cannot run on a TPUStrategy: its input_fn batches the global batch, which "
                    "tf.distribute may split unevenly (dynamic shapes a TPU recompiles or rejects). Use "
                    "estimators.TPUEstimator(..., use_tpu=True, train_batch_size=...), whose input_fn gets "
                    "params['batch_size'] per core."
                )
            self._strategies[key] = strategy
        return self._strategies[key]

    def _global_batch_size(self, mode: str) -> int | None:
        """The global batch for `mode`, or None when input_fn decides it (plain Estimator)."""
        return None

    def _input_params(self) -> dict:
        return dict(self._params)

    def _params_for_model_fn(self, params: dict, batch_size: int | None) -> dict:
        """The params dict model_fn receives (tf.estimator passes its params unchanged)."""
        return dict(params)

    def _input_elements_per_step(self, runtime: Runtime) -> int:
        """Elements one step takes from this worker's input pipeline: one batch per local replica."""
        return local_replicas(runtime.strategy)

    def _distributed_dataset(self, runtime: Runtime, input_fn: Callable, mode: str):
        """input_fn's dataset once per worker (with its InputContext), each replica taking its own batch from it,
        as tf.estimator 2.15 fed train_distribute/eval_distribute replicas (the global batch is batch x replicas)."""

        def dataset_fn(input_context: tf.distribute.InputContext) -> tf.data.Dataset:
            dataset = call_input_fn(input_fn, mode=mode, params=self._input_params(), config=self._config,
                                    input_context=input_context)
            if mode != ModeKeys.TRAIN:
                dataset = masked_stream(dataset, batch_size=0, static=False, split_partial=False)
            return dataset

        return runtime.strategy.distribute_datasets_from_function(dataset_fn)

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
        """The newest complete checkpoint in model_dir, or None (see Checkpointer.latest)."""
        return self._checkpointer.latest()

    def get_variable_names(self) -> list[str]:
        """Names of the variables in the latest checkpoint: the TF1 names tf.estimator wrote."""
        names = self._checkpointer.contents(self._require_checkpoint())
        return sorted(name for name in names if name != INPUT_POSITION)  # the engine's own entry is not the model's

    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable `name` in the latest checkpoint (an object-based one's also by TF1 name)."""
        path = self._require_checkpoint()
        name = name[:-2] if name.endswith(":0") else name
        key = self._checkpointer.key_of(path, name)
        if key is None:
            raise ValueError(f"No variable {name!r} in checkpoint {path}; see get_variable_names().")
        return tf.train.load_variable(path, key)

    def _require_checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"Could not find trained model (no checkpoint) in model_dir {self._model_dir!r}.")
        return path

    def _resolve_checkpoint(self, checkpoint_path: str | None) -> str | None:
        """A given checkpoint (prefix or directory) or the latest; None when there is none."""
        if not checkpoint_path:
            return self.latest_checkpoint()
        return checkpoint_at(checkpoint_path, "restore")

    def _restore(self, path: str, variables: dict, optional: tuple = ()) -> None:
        stored = self._checkpointer.restorable(path)  # an object-based checkpoint by its variables' TF1 names too
        self._checkpointer.restore(path, mapping.restore_plan(variables, stored, optional))

    def _warm_start_from(self, runtime: Runtime) -> None:
        """tf.estimator's warm start: the selected variables from another checkpoint, the rest as initialised."""
        trainable = {e.name for e in runtime.store.entries() if e.tf1_trainable}
        path, assignments = warm_start.plan(self._warm_start, runtime.saved_variables(), trainable)
        self._checkpointer.restore(path, assignments)
        logging.info("Warm-started %d variables from %s.", len(assignments), path)

    def _step_summaries(self, runtime: Runtime) -> StepSummaries | None:
        """The summaries train steps write (the chief's; none on other workers), one per runtime."""
        if not is_chief(runtime.strategy):
            return None
        if runtime not in self._step_summaries_made:
            self._step_summaries_made[runtime] = StepSummaries(
                self._summaries.writer(""), self._config.save_summary_steps, runtime.global_step)
        return self._step_summaries_made[runtime]

    def _save(self, runtime: Runtime, step: int, lock: ModelDirLock | None) -> str | None:
        """The chief writes the checkpoint (with the train stream's position); every worker waits for it."""
        path = None
        if is_chief(runtime.strategy):
            if lock is not None:
                lock.heartbeat()
            position = self._input_position
            position.assign(self._train_input.position)
            variables = dict(runtime.saved_variables())
            if self._config_value("save_input_position", True):
                variables[INPUT_POSITION] = position
            path = self._checkpointer.save(variables, step)
            logging.debug("Saved checkpoint for step %d: %s", step, path)
        runtime.barrier()  # no worker reads model_dir before the chief's checkpoint is complete
        return path

    def _config_value(self, name: str, default: Any) -> Any:
        return getattr(self._config, name, default)

    def _resume_position(self, latest: str | None) -> int:
        """Train-stream steps a checkpoint records as taken (0 without one, or when the stream ended)."""
        if latest is None or not self._config_value("save_input_position", True):
            return 0
        if INPUT_POSITION not in self._checkpointer.contents(latest):
            return 0
        return int(tf.train.load_variable(latest, INPUT_POSITION))

    # -- train --------------------------------------------------------------------------------------
    @seeded_entry_point
    def train(self, input_fn: Callable, hooks: Any = None, steps: int | None = None,
              max_steps: int | None = None, saving_listeners: Any = None) -> Estimator:
        """Trains until `steps` more steps, `max_steps` in all, the end of input_fn's data, or a hook's stop."""
        if getattr(self._config, "task_type", None) in ("evaluator", "ps"):
            raise ValueError(f"train() was called on a {self._config.task_type!r} task (TF_CONFIG), which does not "
                             "train: call estimators.train_and_evaluate, which runs what each task of a cluster does.")
        if steps is not None and max_steps is not None:
            raise ValueError(f"Set at most one of steps ({steps}) and max_steps ({max_steps}).")
        steps, max_steps = self._checked_steps("steps", steps), self._checked_steps("max_steps", max_steps)
        if self._config.train_distribute is None and not self._use_tpu and _master_with_workers(self._config):
            raise ValueError(
                f"train() was called on the {self._config.task_type!r} task of a TF_CONFIG cluster with a 'master' job "
                f"and 'worker' tasks ({sorted(self._config.cluster_spec.jobs)}). tf.estimator 2.15 trained such a "
                "cluster between-graph (TF1 sessions sharing variables on the 'ps' tasks), which this engine does not "
                "run: each task would train its own copy. Name the 'master' job 'chief' in TF_CONFIG to train the "
                "chief and workers synchronously (MultiWorkerMirroredStrategy, which refuses a 'master' job), and "
                "evaluate with an 'evaluator' task.")
        def on_graph() -> Estimator:
            graph_train.train(self, input_fn, hooks, steps, max_steps, saving_listeners)
            return self

        return self._on_path(lambda: self._train_tf2(input_fn, hooks, steps, max_steps, saving_listeners), on_graph,
                             hooks, saving_listeners)

    def _checked_steps(self, name: str, value: Any) -> int | None:
        """train()'s steps / max_steps as a whole count. A fractional one is taken as 2.15's StopAtStepHook took
        it: training stops at the first step at or past it (12.5 steps are 13)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
            raise ValueError(f"Must specify {name} > 0: {name} must be a positive integer, got {value!r}.")
        return math.ceil(value)

    def _train_tf2(self, input_fn: Callable, hooks: Any, steps: int | None, max_steps: int | None,
                   saving_listeners: Any) -> Estimator:
        hooks = checked_hooks(hooks, "train() hooks", Hook)
        listeners = checked_hooks(saving_listeners, "train() saving_listeners", SavingListener)
        check_model_dir(self._model_dir, write=self._config.is_chief)  # only the chief writes model_dir
        latest = self.latest_checkpoint()
        start = self._checkpointer.global_step(latest) if latest else 0
        if max_steps is not None and start >= max_steps:
            logging.info("Skipping training: global step %d already reached max_steps=%d.", start, max_steps)
            return self
        target = max_steps if max_steps is not None else (start + steps if steps is not None else math.inf)

        runtime = self._runtime(ModeKeys.TRAIN)
        chief = is_chief(runtime.strategy)
        self._checkpointer.is_chief = chief
        batch_size = self._model_fn_batch_size(ModeKeys.TRAIN, runtime)
        lock = ModelDirLock(self._model_dir) if chief else contextlib.nullcontext()
        display = ProgressDisplay("train", total=None if math.isinf(target) else int(target), start=start)
        summaries = self._step_summaries(runtime)  # its variable outside the strategy: chief-only state
        _ = self._input_position  # made here, outside the strategy: no worker-side collective
        with display, lock as held, safe_point(collect_first=True), runtime.strategy.scope(), \
                stopping_on_signals(self._stop):
            per_step = self._input_elements_per_step(runtime)

            def make(at: int):
                return iter(self._distributed_dataset(runtime, _skipping(input_fn, at * per_step, self._config),
                                                      ModeKeys.TRAIN))

            self._train_input.iterator(input_fn, make, resume_at=self._resume_position(latest))
            if summaries is not None:
                summaries.starting_at(start)
            loop, trace = runtime.train_loop(batch_size, self._stop.variable, summaries, fetch_names(hooks))
            display.compiling()
            compile_started = time.monotonic()
            loop.trace(self._train_input.live)  # no local reference: the stream may be freed in the background
            display.compiled(time.monotonic() - compile_started)
            loop.fetches.attach(hooks, [*trace.training_hooks, *trace.chief_hooks])
            self._restore_for_training(runtime, latest)
            run_loop = StartingOverAtItsEnd(loop, self._train_input, input_fn, make,
                                            stopping=lambda: self._stop.signal_name is not None)
            plan = self._train_plan(runtime, run_loop, trace, start, target, hooks, listeners,
                                    held if chief else None, display)
            result = TrainController(plan).run()
        if result.stopped_by == SIGNAL:
            raise TrainingInterrupted(self._stop.signal_name or "a signal", result.step, result.checkpoint)
        return self

    def _train_plan(self, runtime: Runtime, run_loop: Callable, trace, start: int, target: float, hooks: list,
                    listeners: list, lock: ModelDirLock | None, display: ProgressDisplay) -> TrainPlan:
        config = self._config
        global_batch = self._global_batch_size(ModeKeys.TRAIN)
        report = ProgressReport(
            start, config.log_step_count_steps, config.save_summary_steps, global_batch,
            (lambda at, values: self._summaries.scalars("", at, values)) if is_chief(runtime.strategy) else None,
            log=logging.debug if display.enabled else logging.info,
        )

        def after_loop(info, final: bool) -> None:
            report.after_loop(info.step, info.steps, info.seconds, info.loss, info.learning_rate, final)
            rate = info.steps / info.seconds * global_batch if global_batch and info.seconds > 0 else None
            # model_fn's reported scalars (train_metrics.report: the mean over this loop's steps) after the loss
            display.update(info.step, loss=info.loss, examples_per_sec=rate, metrics=info.metrics)

        def save(step: int) -> str | None:
            path = self._save(runtime, step, lock)
            if path:
                display.note(f"Saved checkpoint for step {step}: {path}")
            return path

        schedule = CheckpointSchedule(start, config.save_checkpoints_steps, config.checkpoint_every_secs)
        return TrainPlan(
            run_loop=run_loop,
            start=start,
            target=target,
            iterations=IterationsPerLoop(config.tpu_config.iterations_per_loop),
            save=save,
            checkpoint_due=schedule.due,
            checkpoint_saved=schedule.saved,
            report=after_loop,
            stop_requested=lambda: self._stop.signal_name,
            agree=runtime.any_worker,
            has_optimizer=lambda: bool(trace.optimizers),
            input_advanced=self._train_input.advanced,
            hooks=[*hooks, *trace.training_hooks, *(trace.chief_hooks if is_chief(runtime.strategy) else ())],
            listeners=listeners,
            resume_note=self._checkpointer.resume_note,
        )

    def _restore_for_training(self, runtime: Runtime, latest: str | None) -> None:
        if latest:
            self._restore(latest, runtime.saved_variables())
            step = int(runtime.global_step.numpy())
            logging.info("Resumed from %s (global step %d).", latest, step)
            if is_chief(runtime.strategy):
                self._summaries.resumed("", step)
            return
        runtime.global_step.assign(0)
        if self._warm_start is not None:
            self._warm_start_from(runtime)

    # -- evaluate --------------------------------------------------------------------------------------
    @seeded_entry_point
    def evaluate(self, input_fn: Callable, steps: int | None = None, hooks: Any = None,
                 checkpoint_path: str | None = None, name: str | None = None) -> dict:
        """Exact metrics over input_fn's data (or `steps` batches), plus `loss` and `global_step`."""
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0):
            raise ValueError(f"Must specify steps > 0: steps must be a positive integer or None, got {steps!r}.")
        check_model_dir(self._model_dir, write=False)
        path = self._resolve_checkpoint(checkpoint_path)
        with stopping_on_signals(self._stop):  # SIGINT/SIGTERM: EvaluationInterrupted at the next batch
            if self._stop.requested:  # inside train() (train_and_evaluate), stopping already: not even begun
                raise EvaluationInterrupted(self._stop.signal_name, self._checkpointer.global_step(path) if path
                                            else 0, path, 0)
            if checkpoint_path is None and path is not None:
                # The newest one, chosen again if a trainer rotates it away mid-read (as continuous evaluation did).
                return self._checkpointer.read_newest(
                    lambda newest: self._evaluate_at(input_fn, steps, hooks, newest, name), chosen=path)
            return self._evaluate_at(input_fn, steps, hooks, path, name)

    def _evaluate_at(self, input_fn: Callable, steps: int | None, hooks: Any, path: str | None,
                     name: str | None) -> dict:
        """evaluate() of the checkpoint at `path` on the program's path."""
        return self._on_path(lambda: self._evaluate_tf2(input_fn, steps, hooks, path, name),
                             lambda: graph_evaluate.evaluate(self, input_fn, steps, hooks, path, name), hooks)

    def _evaluate_tf2(self, input_fn: Callable, steps: int | None, hooks: Any, path: str | None,
                      name: str | None) -> dict:
        _no_hooks(hooks, "evaluate()")
        runtime = self._runtime(ModeKeys.EVAL)
        batch_size = self._model_fn_batch_size(ModeKeys.EVAL, runtime)
        _, trace = runtime.inference_loop(ModeKeys.EVAL, batch_size, self._stop.variable)
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
            self._summaries.raw(subdir, results["global_step"], eval_summaries.metrics_summary(results))
            if path:
                self._summaries.raw(subdir, results["global_step"], eval_summaries.checkpoint_path_summary(path))
        logging.info("Evaluation at global step %d: %s", results["global_step"], scalars)
        return results

    def eval_dir(self, name: str | None = None) -> str:
        """Where evaluate(name=...) writes its metrics: model_dir/eval, or model_dir/eval_<name>."""
        return os.path.join(self._model_dir, f"eval_{name}" if name else "eval")

    def _inference(self, runtime: Runtime, mode: str, input_fn: Callable, batch_size: int | None,
                   steps: int | None, path: str | None) -> Iterator[InferenceLoopResult]:
        """Runs the eval/predict loop over the input, yielding each loop's result.

        The strategy's scope is held only while TensorFlow runs, never across a yield: a caller
        may stop reading predictions half way without leaving a scope open. The global step is
        put back after every loop: only training moves it (a model_fn may touch it in any mode).
        An evaluation stops before the next batch on SIGINT/SIGTERM (EvaluationInterrupted). Predict runs one
        batch per loop, as 2.15 did (on a TPU too): the first predictions come after one batch, not a loop's.
        """
        per_loop = IterationsPerLoop(1 if mode == ModeKeys.PREDICT else self._config.tpu_config.iterations_per_loop)
        remaining = steps if steps is not None else math.inf
        loop, trace = runtime.inference_loop(mode, batch_size, self._stop.variable if mode == ModeKeys.EVAL
                                             else None)
        batches = 0
        iterator = Held()  # the only reference: freed in the background when this generator ends
        try:
            with safe_point(collect_first=True), runtime.strategy.scope():
                iterator.value = iter(self._distributed_dataset(runtime, input_fn, mode))
                first_value = next(iterator.value)
                runtime.remember_eval_element(first_value)
                loop.trace(iterator.value, iterator.value.element_spec)
                self._restore_for_inference(runtime, path)
                step = runtime.global_step.read_value()
                for metric in runtime.metric_objects(trace).values():
                    metric.reset_state()
            while remaining > 0:
                if mode == ModeKeys.EVAL and runtime.any_worker(self._stop.requested):
                    raise EvaluationInterrupted(self._stop.signal_name or "a signal", int(step), path, batches)
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

    def _restore_for_inference(self, runtime: Runtime, path: str | None) -> None:
        """The model's weights from `path` (every one required); without a checkpoint, as tf.estimator did."""
        if path is not None:
            self._restore(path, runtime.model_variables())
            return
        runtime.global_step.assign(0)
        if self._warm_start is not None:
            self._warm_start_from(runtime)
            return
        logging.warning("Could not find a trained model in model_dir %s; running with freshly initialised "
                        "variables.", self._model_dir)

    # -- predict ----------------------------------------------------------------------------------------
    @seeded_generator
    def predict(self, input_fn: Callable, predict_keys: list[str] | None = None, hooks: Any = None,
                checkpoint_path: str | None = None, yield_single_examples: bool = True) -> Iterator:
        """Yields model_fn's predictions for every example of input_fn's data, in input order."""
        path = self._resolve_checkpoint(checkpoint_path)
        yield from self._on_path(
            lambda: _begun(self._predict_tf2(input_fn, predict_keys, hooks, path, yield_single_examples)),
            lambda: graph_predict.predict(self, input_fn, predict_keys, hooks, path, yield_single_examples), hooks)

    def _predict_tf2(self, input_fn: Callable, predict_keys: list[str] | None, hooks: Any, path: str | None,
                     yield_single_examples: bool) -> Iterator:
        _no_hooks(hooks, "predict()")
        runtime = self._runtime(ModeKeys.PREDICT)
        batch_size = self._model_fn_batch_size(ModeKeys.PREDICT, runtime)
        with ProgressDisplay("predict", unit="examples") as display:
            examples = 0
            for result in self._inference(runtime, ModeKeys.PREDICT, input_fn, batch_size, None, path):
                examples += int(result.count)
                display.update(examples)
                yield from split_predictions(result.rows, result.mask, predict_keys, yield_single_examples,
                                             result.step_rows)

    # -- export --------------------------------------------------------------------------------------------
    @seeded_entry_point
    def export_saved_model(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                           assets_extra: dict | None = None, as_text: bool = False,
                           checkpoint_path: str | None = None, experimental_mode: str = ModeKeys.PREDICT) -> bytes:
        """Writes a SavedModel for serving; returns its directory (bytes), as tf.estimator did."""
        from estimators.runtime.saved_model import export_saved_model

        path = self._resolve_checkpoint(checkpoint_path)
        if path is None and self._warm_start is not None:
            path = warm_start.checkpoint_path(self._warm_start)
        if path is None:
            raise ValueError(f"Could not find a trained model in model_dir {self._model_dir!r}; train() first or "
                             "pass checkpoint_path.")
        def on_tf2() -> bytes:
            with safe_point(collect_first=True):
                return export_saved_model(self._model_fn, self._params, self._config, path, export_dir_base,
                                          serving_input_receiver_fn, assets_extra=assets_extra, as_text=as_text,
                                          experimental_mode=experimental_mode)

        def on_graph() -> bytes:
            if experimental_mode != ModeKeys.PREDICT:
                raise ValueError(f"experimental_mode={experimental_mode!r} is not supported: only ModeKeys.PREDICT "
                                 "exports a SavedModel here.")
            return graph_export.export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra,
                                                   as_text, path)

        return self._on_path(on_tf2, on_graph)

    def export_savedmodel(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                          assets_extra: dict | None = None, as_text: bool = False,
                          checkpoint_path: str | None = None, strip_default_attrs: bool = False) -> bytes:
        """tf.compat.v1 Estimator's name for export_saved_model (strip_default_attrs has no TF2 meaning)."""
        del strip_default_attrs
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                       checkpoint_path)
