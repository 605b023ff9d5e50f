"""Estimator: runs model_fn/input_fn pairs under tf.distribute with tf.estimator's contract.

A thin shell over two executors: the TF2 path (estimators/tf2) and the graph path (estimators/graph), both
given one frozen EngineContext. The deployment (estimators/distribute/deployment.py; TPUEstimator's in
estimators/tpu) says where each mode runs; the Checkpointer (checkpoint/) owns model_dir's checkpoints.
"""

from __future__ import annotations

import inspect
import itertools
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from estimators import log as logging
from estimators import path_choice
from estimators.checkpoint import warm_start
from estimators.checkpoint.checkpointer import Checkpointer, checkpoint_at
from estimators.checkpoint.model_dir_check import check_model_dir
from estimators.compat import guards  # noqa: F401 - registers the engine's guards before any call
from estimators.compat.fn_args import bound_model_fn, model_fn_args
from estimators.compat.random_seed import seeded_entry_point, seeded_generator
from estimators.distribute.deployment import Deployment, master_with_workers
from estimators.engine_context import EngineContext
from estimators.graph import evaluate as graph_evaluate
from estimators.graph import export as graph_export
from estimators.graph import predict as graph_predict
from estimators.graph import train as graph_train
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig, with_session_config
from estimators.tf2.collection import track
from estimators.tf2.executor import INPUT_POSITION, TF2Executor
from estimators.training.preemption import EvaluationInterrupted, StopRequest, stopping_on_signals
from estimators.training.summaries import SummaryWriters

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")  # what model_fn may take, by name


def _load_global_step_from_checkpoint_dir(checkpoint_dir: str) -> int:
    """The global step of the newest complete checkpoint in checkpoint_dir, 0 without one (2.15's private helper,
    which public TPUEstimator programs call)."""
    try:
        checkpointer = Checkpointer(os.fsdecode(checkpoint_dir), is_chief=False)
        latest = checkpointer.latest()
        return checkpointer.global_step(latest) if latest else 0
    except (ValueError, RuntimeError, tf.errors.OpError):
        return 0


def _begun(items: Iterator) -> Iterator:
    """`items` with its first one made now (so the TF2 path's GraphPathNeeded is raised here, before any yield)."""
    try:
        first = next(items)
    except StopIteration:
        return iter(())
    return itertools.chain([first], items)


def _checked_steps(name: str, value: Any, whole_only: bool) -> int | None:
    """train()'s steps / max_steps as a whole count. A fractional one is taken as 2.15's StopAtStepHook took
    it: training stops at the first step at or past it (12.5 steps are 13); TPUEstimator 2.15 took only whole
    step counts (its loops run whole steps): there a float is a TypeError."""
    if value is None:
        return None
    if whole_only and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{name} must be int, got {value!r} of type {type(value).__name__}: TPUEstimator trains "
                        f"whole steps.")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        raise ValueError(f"Must specify {name} > 0: {name} must be a positive integer, got {value!r}.")
    return math.ceil(value)


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
        self._setup(model_fn, model_dir, config, params, warm_start_from, Deployment)

    def _setup(self, model_fn: Callable, model_dir: str | None, config: RunConfig | None, params: dict | None,
               warm_start_from: Any, deployment: Callable[[RunConfig, dict], Deployment]) -> None:
        """The construction every Estimator shares; `deployment` makes where each mode runs from config and params."""
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
        self._deployment = deployment(self._config, self._params)
        self._checkpointer = Checkpointer(self._model_dir, config.keep_checkpoint_max)
        self._stop = StopRequest()
        self._context = EngineContext(
            model_fn=model_fn, params=self._params, config=self._config, model_dir=self._model_dir,
            checkpointer=self._checkpointer, deployment=self._deployment, warm_start=self._warm_start,
            stop=self._stop, summaries=SummaryWriters(self._model_dir))
        self._tf2 = TF2Executor(self._context)
        self._runtimes = self._tf2.runtimes  # one per strategy (read by tests and legacy checks)
        track(self)  # counted until freed: engine calls collect garbage when enough have died (tf2/collection)
        self._execution: str | None = None  # the path model_fn runs on once the program has shown it
        self._graph_reason = ""  # why it is the graph path

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

    # -- which path runs model_fn ------------------------------------------------------------------
    def _on_path(self, tf2: Callable[[], Any], graph: Callable[[EngineContext], Any], *hook_groups: Any) -> Any:
        """The one path choice of every entry point (estimators/path_choice.py): tf2() on the TF2 path, unless the
        call's hooks or RunConfig ask for the graph path, or model_fn shows (GraphPathNeeded, before any step runs or
        anything is written) that it needs a session; graph(context) then, and on every later call."""
        chosen, reason = path_choice.requested_path(self._config, *hook_groups)
        if chosen == path_choice.GRAPH:
            self._use_graph_path(reason)
        if (chosen or self._execution or path_choice.TF2) == path_choice.TF2:
            try:
                return tf2()
            except path_choice.GraphPathNeeded as needed:
                self._use_graph_path(needed.reason)
        return graph(self._context.on_graph(self._graph_reason or "the program asked for it"))

    def _use_graph_path(self, reason: str) -> None:
        if self._execution == path_choice.GRAPH:
            return
        if self._config.execution == path_choice.TF2:
            raise path_choice.pinned_to_tf2(reason)
        self._deployment.check_graph_path()
        logging.info("model_fn runs on the graph path (tf.Graph and sessions, as tf.estimator ran it): %s.", reason)
        self._execution, self._graph_reason = path_choice.GRAPH, reason

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
        whole = self._deployment.whole_steps_only
        steps, max_steps = _checked_steps("steps", steps, whole), _checked_steps("max_steps", max_steps, whole)
        if self._config.train_distribute is None and not self._deployment.use_tpu and \
                master_with_workers(self._config):
            raise ValueError(
                f"train() was called on the {self._config.task_type!r} task of a TF_CONFIG cluster with a 'master' job "
                f"and 'worker' tasks ({sorted(self._config.cluster_spec.jobs)}). tf.estimator 2.15 trained such a "
                "cluster between-graph (TF1 sessions sharing variables on the 'ps' tasks), which this engine does not "
                "run: each task would train its own copy. Name the 'master' job 'chief' in TF_CONFIG to train the "
                "chief and workers synchronously (MultiWorkerMirroredStrategy, which refuses a 'master' job), and "
                "evaluate with an 'evaluator' task.")
        self._on_path(lambda: self._tf2.train(input_fn, hooks, steps, max_steps, saving_listeners),
                      lambda ctx: graph_train.train(ctx, input_fn, hooks, steps, max_steps, saving_listeners),
                      hooks, saving_listeners)
        return self

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
        return self._on_path(lambda: self._tf2.evaluate(input_fn, steps, hooks, path, name),
                             lambda ctx: graph_evaluate.evaluate(ctx, input_fn, steps, hooks, path, name), hooks)

    def eval_dir(self, name: str | None = None) -> str:
        """Where evaluate(name=...) writes its metrics: model_dir/eval, or model_dir/eval_<name>."""
        return os.path.join(self._model_dir, f"eval_{name}" if name else "eval")

    # -- predict ----------------------------------------------------------------------------------------
    @seeded_generator
    def predict(self, input_fn: Callable, predict_keys: list[str] | None = None, hooks: Any = None,
                checkpoint_path: str | None = None, yield_single_examples: bool = True) -> Iterator:
        """Yields model_fn's predictions for every example of input_fn's data, in input order."""
        path = self._resolve_checkpoint(checkpoint_path)
        yield from self._on_path(
            lambda: _begun(self._tf2.predict(input_fn, predict_keys, hooks, path, yield_single_examples)),
            lambda ctx: graph_predict.predict(ctx, input_fn, predict_keys, hooks, path, yield_single_examples),
            hooks)

    # -- export --------------------------------------------------------------------------------------------
    @seeded_entry_point
    def export_saved_model(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                           assets_extra: dict | None = None, as_text: bool = False,
                           checkpoint_path: str | None = None, experimental_mode: str = ModeKeys.PREDICT) -> bytes:
        """Writes a SavedModel for serving; returns its directory (bytes), as tf.estimator did."""
        self._deployment.check_export()
        path = self._resolve_checkpoint(checkpoint_path)
        if path is None and self._warm_start is not None:
            path = warm_start.checkpoint_path(self._warm_start)
        if path is None:
            raise ValueError(f"Could not find a trained model in model_dir {self._model_dir!r}; train() first or "
                             "pass checkpoint_path.")

        def on_graph(ctx: EngineContext) -> bytes:
            if experimental_mode != ModeKeys.PREDICT:
                raise ValueError(f"experimental_mode={experimental_mode!r} is not supported: only ModeKeys.PREDICT "
                                 "exports a SavedModel here.")
            return graph_export.export_saved_model(ctx, export_dir_base, serving_input_receiver_fn, assets_extra,
                                                   as_text, path)

        return self._on_path(lambda: self._tf2.export(path, export_dir_base, serving_input_receiver_fn, assets_extra,
                                                      as_text, experimental_mode), on_graph)

    def export_savedmodel(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                          assets_extra: dict | None = None, as_text: bool = False,
                          checkpoint_path: str | None = None, strip_default_attrs: bool = False) -> bytes:
        """tf.compat.v1 Estimator's name for export_saved_model (strip_default_attrs has no TF2 meaning)."""
        del strip_default_attrs
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                       checkpoint_path)
