"""The per-replica step functions: call model_fn in its TF1 context and check what it returned.

Each builder returns the step and a `StepTrace` that the step fills in when it is traced (the
metric_fn, the Keras metrics model_fn updated, the optimizers it applied): the loop that owns the
step reads it there, rather than from whichever step was traced last.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import tensorflow as tf

from estimators import path_choice
from estimators.compat import metrics
from estimators.compat.call_context import ModelFnCall
from estimators.compat.fn_args import model_fn_args
from estimators.distribute.inputs import split_element
from estimators.distribute.strategy import is_tpu_strategy
from estimators.mode_keys import ModeKeys
from estimators.specs import EstimatorSpec, TPUEstimatorSpec, validate_spec
from estimators.tf2 import keras_inputs
from estimators.tf2.model_fn_call import call_model_fn
from estimators.tf2.variable_store import VariableStore
from estimators.training import logging_hook, train_metrics
from estimators.training.step_summaries import write_v1_summaries

_LEARNING_RATE = re.compile(r"learning_rate(_\d+)?")  # a v1 summary op with that tag (names get _1, _2 ...)


@dataclass
class StepTrace:
    """What tracing a step learned about model_fn: read by the loop that owns the step.

    metric_pairs names eval_metric_ops' tf.compat.v1 (value, update_op) pairs; their values are
    read after the last batch by `ModelFnSteps.metric_values` (a read-only call on an eval batch).
    """

    metric_fn: Callable | None = None
    metric_objects: dict = field(default_factory=dict)
    metric_pairs: list = field(default_factory=list)
    optimizers: list = field(default_factory=list)
    training_hooks: list = field(default_factory=list)  # the spec's training_hooks
    chief_hooks: list = field(default_factory=list)  # its training_chief_hooks (run by the chief only)
    host_call_fn: Callable | None = None  # TPUEstimatorSpec.host_call's function
    own_learning_rate: bool = False  # model_fn writes a `learning_rate` summary of its own

    @property
    def writes_learning_rate(self) -> bool:
        """Whether the engine writes its `learning_rate` summary: with an optimizer, unless the program may write
        that tag itself (a v1 summary of that name, or a host_call: 2.15 wrote none, so two would collide)."""
        return bool(self.optimizers) and self.host_call_fn is None and not self.own_learning_rate


class TrainOutputs(NamedTuple):
    """One replica's train step: its loss and the learning rate its optimizer used."""

    loss: tf.Tensor
    learning_rate: tf.Tensor
    host_call: Any = ()  # TPUEstimatorSpec.host_call's tensors (list or dict), for the host function
    fetched: Any = ()  # {key: tensor} LoggingTensorHooks asked for (logging_hook.StepFetches keys)
    metrics: Any = ()  # {name: (value x weight, weight)} model_fn reported (training/train_metrics.py)


class InferenceOutputs(NamedTuple):
    """One replica's eval/predict step: loss x weight, real rows, per-row tensors, row mask, host tensors, weight."""

    weighted_loss: tf.Tensor
    real_rows: tf.Tensor
    rows: Any
    mask: tf.Tensor
    host_call: Any = ()  # TPUEstimatorSpec.host_call's tensors, for the host function
    loss_weight: Any = 0.0  # what weighted_loss is the loss times (the evaluation loss: their sums' ratio)


class ModelFnSteps:
    """Builds per-replica train/eval/predict steps around one user model_fn."""

    def __init__(self, model_fn: Callable, params: dict, config: Any, num_replicas: int, static_shapes: bool,
                 global_step: tf.Variable, store: VariableStore, jit_compile: bool = False,
                 params_for_model_fn: Callable | None = None):
        self._model_fn = model_fn
        self._args = model_fn_args(model_fn)
        self._params = params
        self._config = config
        self._num_replicas = num_replicas
        self._static_shapes = static_shapes
        self._global_step = global_step
        self._store = store  # serves model_fn's variables (its creator_scope) and names the saved ones
        self._jit_compile = jit_compile
        self._params_for = params_for_model_fn or (lambda params, batch_size: dict(params))

    def _compiled(self, step: Callable) -> Callable:
        """The step as graph code, compiled by XLA on its replica's device when jit_compile is set.

        model_fn runs as plain graph code, as tf.estimator ran it: AutoGraph does not rewrite it
        (nor Keras, nor the engine), which would cost seconds of tracing; data-dependent control
        flow in a model_fn uses tf.cond / tf.while_loop.
        """
        step = tf.autograph.experimental.do_not_convert(step)
        return tf.function(step, jit_compile=True) if self._jit_compile else step

    def call(self, mode: str, features: Any, labels: Any, batch_size: int | None, read_only: bool = False):
        """Calls model_fn once in its TF1 context; returns (checked spec, call record).

        The variable store's scope is entered here, innermost: MirroredStrategy's own creator in
        each replica thread would otherwise serve replicas after the first without asking it.
        read_only: the call only reads v1 metric values (tf2/state.py prunes it to them), so its writes
        to saved variables raise no GraphPathNeeded: none of them runs.
        """
        call = ModelFnCall(mode, self._num_replicas, read_only=read_only)
        params = self._params_for(self._params, batch_size)
        graph = tf.compat.v1.get_default_graph()
        built_before = len(graph.get_operations())
        # the trainable variables the call reads, checked to be the store's (the pruned read of metric values is not)
        accessed = contextlib.nullcontext() if read_only else tf.GradientTape()
        with self._store.creator_scope(mode), accessed:
            try:
                spec = call_model_fn(self._model_fn, self._args, call, features, labels, params, self._config,
                                     self._global_step)
            except TypeError as err:
                path_choice.needs_session(keras_inputs.graph_path_reason(err))
                if "Variable is unhashable" not in str(err):
                    raise
                # TF1 code keys sets and dicts by variables (EMA helpers, variables_to_restore): graph variables hash
                path_choice.needs_session(f"it uses variables as set or dict keys ({str(err).splitlines()[-1][:80]})")
                raise
            except ValueError as err:
                refusal = keras_inputs.keras3_input_error(err)
                if refusal is not None:
                    raise refusal from None
                raise
        if not read_only:
            self._check_own_variables(accessed.watched_variables())
        path_choice.needs_session(path_choice.spec_needs_session(spec)
                                  or path_choice.locals_need_session(call.session_locals)
                                  or path_choice.ops_need_session(graph.get_operations()[built_before:]))
        return validate_spec(spec, mode), call

    def train(self, batch_size: int | None, fetch_names: tuple = ()) -> tuple[Callable, StepTrace]:
        """The train step; `fetch_names` ((key, tensor name), ...) are returned in its outputs' `fetched`."""
        trace = StepTrace()

        def step(element):
            # model_fn sees the global step of the step being run; whatever its train_op does to the
            # step (minimize(global_step=...), assign_add), the step ends one higher, inside the step.
            before = self._global_step.read_value()
            if batch_size is not None:  # static shapes: tf.distribute's optional element loses the batch size
                # (only a lost first dimension is restored: PER_HOST_V2 batches may put the batch elsewhere)
                element = tf.nest.map_structure(
                    lambda t: tf.ensure_shape(t, [batch_size, *t.shape[1:]]) if t.shape.rank and t.shape[0] is None
                    else t, element)
            features, labels = split_element(element)
            spec, call = self.call(ModeKeys.TRAIN, features, labels, batch_size)
            self._check_optimizers(call)
            trace.optimizers = list(call.optimizers)
            if not trace.training_hooks and not trace.chief_hooks:  # every replica's call returns them: keep one
                trace.training_hooks = list(spec.training_hooks or ())
                trace.chief_hooks = list(getattr(spec, "training_chief_hooks", None) or ())
            rates = [o.learning_rate for o in call.optimizers if o.learning_rate is not None]
            learning_rate = rates[0] if rates else tf.constant(0.0)
            write_v1_summaries(call.summaries)
            trace.own_learning_rate = any(_LEARNING_RATE.fullmatch(getattr(t, "op", t).name.rsplit("/", 1)[-1])
                                          for t in call.summaries or ())
            with tf.control_dependencies(tf.nest.flatten(spec.train_op)):
                loss = tf.cast(tf.reshape(spec.loss, []), tf.float32)
            with tf.control_dependencies([loss]):
                advanced = self._global_step.assign(before + 1)
            fetched = self._fetched(spec, call, fetch_names)
            host_tensors = self._host_call_tensors(spec, trace)
            with tf.control_dependencies([advanced]):  # as TPUEstimator's outfeed: after the step's updates
                host_tensors = tf.nest.map_structure(tf.identity, host_tensors)
                return TrainOutputs(tf.identity(loss), learning_rate, host_tensors, fetched,
                                    train_metrics.reported(call))

        return self._compiled(step), trace

    @staticmethod
    def _fetched(spec, call: ModelFnCall, fetch_names: tuple) -> dict:
        """The tensors train()'s and the spec's LoggingTensorHooks log, by StepFetches key."""
        root = call.names.root if call.names is not None else ""
        fetched = {key: logging_hook.resolve(name, root, f"LoggingTensorHook tensor {name!r}")
                   for key, name in fetch_names}
        hooks = [*(spec.training_hooks or ()), *(getattr(spec, "training_chief_hooks", None) or ())]
        for index, hook in enumerate(logging_hook.spec_loggers(hooks)):
            for tag, tensor in hook.tensors.items():
                fetched[f"spec{index}/{tag}"] = logging_hook.resolve(tensor, root, f"LoggingTensorHook {tag!r}")
        return fetched

    @staticmethod
    def _host_call_tensors(spec, trace: StepTrace) -> Any:
        """TPUEstimatorSpec.host_call's tensors (its function goes to the trace), or ()."""
        if not isinstance(spec, TPUEstimatorSpec) or spec.host_call is None:
            return ()
        trace.host_call_fn, tensors = spec.host_call
        return tensors if isinstance(tensors, dict) else tuple(tensors)

    def _check_own_variables(self, trainable: tuple) -> None:
        """Refuses trainable variables model_fn used but did not make: no checkpoint would hold them."""
        outside = [v for v in trainable if not self._store.holds(v)]
        if outside:
            names = ", ".join(sorted({getattr(v, "name", "?") for v in outside})[:5])
            raise ValueError(
                f"model_fn used trainable variables it did not make ({names}): a Keras model or layer built "
                "outside model_fn? model_dir's checkpoints hold only the variables model_fn makes, so these "
                "would train without being saved, and evaluate(), predict() or a resumed run in a new process "
                "would start them from their initial values. Build the model inside model_fn, as tf.estimator "
                "required: each call built a new graph, where variables made outside it could not be used."
            )

    def _check_optimizers(self, call: ModelFnCall) -> None:
        """Refuses a Keras optimizer whose step count would not be saved, or a bare one under several replicas."""
        for applied in call.optimizers:
            counter = getattr(applied.optimizer, "_iterations", None)  # Keras 3's and tf_keras's step count
            if applied.kind != "v1" and counter is not None and not self._store.holds(counter):
                name = type(applied.optimizer).__name__
                raise ValueError(
                    f"model_fn applied {name}, an optimizer made outside model_fn: its step count (`iterations`, "
                    "which drives its bias correction and learning-rate schedule) is not a variable model_fn "
                    "made, so model_dir's checkpoints would not hold it, and a run resumed from them would start "
                    "it at 0 again and train differently. Make the optimizer inside model_fn (or pass in params "
                    "a callable that makes one), as tf.estimator did: each call built a new graph and optimizer."
                )
        if self._num_replicas < 2:
            return
        for applied in call.optimizers:
            if applied.kind != "v1" and not applied.cross_shard:
                raise ValueError(
                    f"model_fn applied a bare {type(applied.optimizer).__name__} under {self._num_replicas} "
                    "replicas. Keras optimizers sum the replicas' gradients (an update "
                    f"{self._num_replicas} times too large for a mean loss); wrap it: "
                    "CrossShardOptimizer(keras.optimizers.Adam(...)).minimize(loss)."
                )

    def evaluate(self, batch_size: int | None) -> tuple[Callable, StepTrace]:
        trace = StepTrace()

        def step(element):
            (features, labels), mask = split_element(element[0]), element[1]
            spec, _ = self.call(ModeKeys.EVAL, features, labels, batch_size)
            real = tf.reduce_sum(tf.cast(mask, tf.float32))
            loss = tf.cast(tf.reshape(spec.loss, []), tf.float32)
            # Estimator: 2.15's mean of model_fn's losses, one per batch and replica run (a partial last batch
            # weighs as much as a full one). TPUEstimator off the TPU: the same over input_fn's batches, each
            # element weighted by its share of one (element[2]: replica slices, split partial batches). On a
            # TPU: the mean over real rows, 2.15's figure whenever batches are full, as a TPU's are.
            if len(element) == 3:
                weight = tf.cast(element[2], tf.float32)
            else:
                weight = real if self._static_shapes else tf.minimum(real, 1.0)
            weighted_loss = tf.where(real > 0, loss * weight, 0.0)
            if self._static_shapes and isinstance(spec, TPUEstimatorSpec) and spec.host_call is not None:
                raise ValueError(
                    "TPUEstimatorSpec.host_call in EVAL is not run by TPUEstimator here: its exact evaluation "
                    "splits a partial last batch into one step per real row, so a host function would see rows "
                    "repeated. Return host_call only for TRAIN (and PREDICT); evaluation metrics go in eval_metrics."
                )
            return InferenceOutputs(weighted_loss, real, self._metric_tensors(spec, trace), mask,
                                    self._host_call_tensors(spec, trace), weight)

        return self._compiled(step), trace

    def _metric_tensors(self, spec, trace: StepTrace) -> Any:
        if isinstance(spec, TPUEstimatorSpec) and spec.eval_metrics is not None:
            trace.metric_fn, tensors = spec.eval_metrics
            return tensors
        if isinstance(spec, EstimatorSpec) and spec.eval_metric_ops:
            if self._static_shapes:
                raise ValueError(
                    "EstimatorSpec.eval_metric_ops are updated inside model_fn, where padded rows of "
                    "a static-shape (TPU) evaluation would reach them. Return "
                    "TPUEstimatorSpec(eval_metrics=(metric_fn, tensors)) instead."
                )
            trace.metric_objects, trace.metric_pairs = metrics.split_metrics(spec.eval_metric_ops,
                                                                             "eval_metric_ops")
        return ()

    def metric_values(self, batch_size: int | None, trace: StepTrace) -> Callable:
        """A replica step returning eval_metric_ops' v1 values: model_fn called read-only on an eval element.

        The values are computed in the cross-replica merge_call of each metric (sums over replicas)
        after every update of the evaluation: read them once, after the last batch. The call is pruned
        to the values (tf2/state.py), so no write of it runs (the metrics' updates included) and any batch
        of the evaluation serves as its input (zero-row batches would not: oneDNN's Conv2D, for one, rejects them).
        """

        def step(element):
            features, labels = split_element(element[0])
            spec, _ = self.call(ModeKeys.EVAL, features, labels, batch_size, read_only=True)
            ops = spec.eval_metric_ops if isinstance(spec, EstimatorSpec) else None
            return metrics.pair_values(ops, trace.metric_pairs)

        return tf.autograph.experimental.do_not_convert(step)

    def predict(self, batch_size: int | None) -> tuple[Callable, StepTrace]:
        """Predictions and mask, in the eval step's (loss, real rows, rows, mask) layout."""
        trace = StepTrace()

        def step(element):
            features, labels = split_element(element[0], ModeKeys.PREDICT)
            if not is_tpu_strategy(tf.distribute.get_strategy()):
                labels = None  # 2.15's predict() dropped them; only TPUEstimator's TPU predict step passed them on
            spec, _ = self.call(ModeKeys.PREDICT, features, labels, batch_size)
            real = tf.reduce_sum(tf.cast(element[1], tf.float32))
            return InferenceOutputs(tf.constant(0.0), real, spec.predictions, element[1],
                                    self._host_call_tensors(spec, trace), tf.constant(0.0))

        return self._compiled(step), trace


def check_metrics(returned: Any) -> tuple[dict, list[str]]:
    """metric_fn's result as ({name: Keras metric}, [names of tf.compat.v1 pairs]); ValueError otherwise."""
    return metrics.split_metrics(returned, "metric_fn's result")
