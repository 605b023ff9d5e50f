"""model_to_estimator: a compiled Keras model trained, evaluated, predicted and exported as an estimator.

tf.keras.estimator.model_to_estimator's contract (tensorflow_estimator 2.15, keras_lib.py), and the
seeds' keras_to_tpu_model path: model_fn rebuilds the model from its config in every call (so the
engine's variable store owns its variables), starting from the Keras model's current weights, and
uses what the model was compiled with: its loss (with regularization losses), a fresh optimizer of
its optimizer's config, and its metrics, computed on the host from every real example.

Under N replicas Keras 3 divides a compiled loss by N (as in Model.fit, where the optimizer then
sums the replicas' gradients), so the update sums the replicas' gradients of that loss
(CrossShardOptimizer(reduction="sum")): the same step as one replica on the global batch. The loss
reported to the engine is N times Keras's, the per-replica mean, as Keras's own loss tracker reports.

Keras 3 models and tf_keras (Keras 2) ones are both taken: each is rebuilt, scored and trained with
its own Keras (estimators/keras/flavours.py), as 2.15 used Keras 2 for the Keras 2 models of its day.
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from estimators import log as logging
from estimators.checkpoint import object_keys, writer
from estimators.checkpoint.checkpointer import Checkpointer
from estimators.estimator import Estimator
from estimators.export import outputs as export_output_classes
from estimators.export.outputs import ExportOutput, PredictOutput
from estimators.export.receivers import build_raw_serving_input_receiver_fn
from estimators.graph.object_saver import ObjectKeySaver
from estimators.keras.errors import FormattedKeyError
from estimators.keras.flavours import TF_KERAS, Flavour, flavour_of
from estimators.keras.losses import checked_losses
from estimators.keras.object_paths import layout_problem, optimizer_keys, weight_paths
from estimators.keras.structure import ModelStructure, is_subclassed
from estimators.keras.weights import InitialWeights
from estimators.mode_keys import ModeKeys
from estimators.run_config import RunConfig, with_session_config
from estimators.specs import TPUEstimatorSpec
from estimators.tf2.collection import safe_point
from estimators.tf2.state import Runtime
from estimators.tpu.cross_shard_optimizer import CrossShardOptimizer
from estimators.tpu.estimator import TPUEstimator

_DEFAULT_SERVING_KEY = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
_NOT_COMPILED = ("The Keras model has not been compiled: compile() it with a loss and an optimizer, e.g. "
                 "model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy']), "
                 "before model_to_estimator().")


def model_to_estimator(keras_model: Any = None, keras_model_path: str | None = None,
                       custom_objects: dict | None = None, model_dir: str | None = None,
                       config: RunConfig | None = None, checkpoint_format: str | None = None,
                       use_v2_estimator: bool = False, metric_names_map: dict | None = None,
                       export_outputs: dict | None = None, use_tpu: bool = False,
                       train_batch_size: int | None = None, eval_batch_size: int | None = None,
                       predict_batch_size: int | None = None, params: dict | None = None,
                       eval_on_tpu: bool = True) -> Estimator:
    """An estimator running a compiled Keras model: a TPUEstimator with use_tpu or batch sizes, else an Estimator.

    As tf.keras.estimator.model_to_estimator: `keras_model` (a Keras 3 or a tf_keras/Keras 2 model)
    or `keras_model_path` (a saved .keras/.h5 model, loaded with Keras 3), `custom_objects` to rebuild
    custom layers/losses/metrics, `metric_names_map` to rename the compiled metrics (every one of
    them), `export_outputs` {output name: ExportOutput class} for extra
    serving signatures. `use_v2_estimator` is accepted and changes nothing (there is one Estimator).
    `checkpoint_format`: 'checkpoint' saves object-based keys (layer_with_weights-0/kernel/.ATTRIBUTES/
    VARIABLE_VALUE, with the object graph), 'saver' tf.estimator's TF1 names (dense/kernel); None keeps the
    format of model_dir's checkpoints, else 'checkpoint' where 2.15's layout is reproduced (see _object_based).
    Checkpoints of either format are restored.
    The estimator starts from the model's current weights, or, as in 2.15, from the latest checkpoint in
    model_dir/keras when there is one; for a Functional or Sequential model without one, those weights are
    written there first (keras_model.ckpt), as 2.15 did, and warm-started from. A subclassed model is rebuilt
    by its class from get_config() and starts freshly initialised (2.15 could not carry its weights either);
    its inputs and outputs go by position (`input_1`, `output_1`, ...). A tf_keras model compiled with
    [linear optimizer, dnn optimizer] (a WideDeepModel) updates each part with its own optimizer.

    TPUEstimator's arguments (the seeds' keras_to_tpu_model path): `use_tpu`, the global
    `train_batch_size`/`eval_batch_size`/`predict_batch_size` (input_fn(params) then batches
    params['batch_size'] per replica), `eval_on_tpu`. Without any of them the result is an
    Estimator whose input_fn batches the global batch, as 2.15 returned.
    """
    del use_v2_estimator
    if keras_model is None and not keras_model_path:
        raise ValueError("Either keras_model or keras_model_path needs to be provided.")
    if keras_model is not None and keras_model_path:
        raise ValueError("Pass either keras_model or keras_model_path, not both.")
    batch_sizes = (train_batch_size, eval_batch_size, predict_batch_size)
    if use_tpu and train_batch_size is None:
        raise ValueError("use_tpu=True needs train_batch_size (the global batch; also eval_batch_size and "
                         "predict_batch_size to evaluate and predict).")
    with safe_point(collect_first=True):
        if keras_model is None:
            logging.info("Loading the Keras model from %s", keras_model_path)
            keras_model = keras.models.load_model(keras_model_path, custom_objects=custom_objects)
        if flavour_of(keras_model) is None:
            raise ValueError(f"keras_model must be a keras.Model (Keras 3) or a tf_keras.Model (Keras 2), got "
                             f"{type(keras_model).__name__}.")
        _share_session_config(keras_model, config)  # before anything reads the model's weights
        model_fn = KerasModelFn(keras_model, custom_objects, metric_names_map, export_outputs)
    # After the model's own checks (export_outputs naming outputs it lacks is a FormattedKeyError whatever the
    # format, as in 2.15, where that error came first for a supported format)
    config_dir = config.model_dir if config else None
    object_based = _object_based(checkpoint_format, keras_model, model_dir or config_dir)
    if object_based:
        model_fn.object_keys = object_keys.ObjectKeys(model_fn.optimizer_keys())
    warm_start_from = None
    if not (model_dir and config_dir and os.fspath(model_dir) != config_dir):  # else Estimator refuses the pair
        model_dir = _model_dir(model_dir or config_dir)
        warm_start_from = _keras_checkpoint(keras_model, model_dir, config)
        if warm_start_from is None and _starts_from_keras_dir(keras_model, model_dir, config):
            warm_start_from = _save_first_checkpoint(model_fn, model_dir, config)
    if use_tpu or any(size is not None for size in batch_sizes):
        estimator = TPUEstimator(model_fn, model_dir=model_dir, config=config, params=params, use_tpu=use_tpu,
                                 train_batch_size=train_batch_size, eval_batch_size=eval_batch_size,
                                 predict_batch_size=predict_batch_size, eval_on_tpu=eval_on_tpu,
                                 warm_start_from=warm_start_from)
    else:
        estimator = Estimator(model_fn, model_dir=model_dir, config=config, params=params,
                              warm_start_from=warm_start_from)
    estimator._checkpointer.object_keys = model_fn.object_keys  # noqa: SLF001 - the format of its saves
    return estimator


def _model_dir(model_dir: Any) -> str:
    """model_dir, or a new temporary folder when none is given (2.15 chose it before writing model_dir/keras)."""
    if model_dir:
        return os.fspath(model_dir)
    model_dir = tempfile.mkdtemp(prefix="estimator_model_dir_")
    logging.warning("Using temporary folder as model directory: %s", model_dir)
    return model_dir


def _starts_from_keras_dir(keras_model: Any, model_dir: str | None, config: RunConfig | None) -> bool:
    """2.15 warm-started a Functional or Sequential model's estimator from model_dir/keras, on the chief."""
    return bool(model_dir) and not is_subclassed(keras_model) and (config.is_chief if config is not None else True)


def _keras_checkpoint(keras_model: Any, model_dir: str | None, config: RunConfig | None) -> str | None:
    """The checkpoint in `model_dir/keras` to warm-start from, when there is one, or None.

    2.15 kept the Keras model's starting weights in model_dir/keras and warm-started the estimator from that
    folder's latest checkpoint, so a checkpoint already there (keras_model.save_weights(model_dir/keras/...))
    is where the estimator starts, for a Functional or Sequential model on the chief. Without one, the
    Keras model's current weights are written there first (_save_first_checkpoint), as 2.15 did.
    """
    if not _starts_from_keras_dir(keras_model, model_dir, config):
        return None
    return tf.train.latest_checkpoint(os.path.join(os.fspath(model_dir), "keras"))


def _save_first_checkpoint(model_fn: KerasModelFn, model_dir: str, config: RunConfig | None) -> str | None:
    """Writes model_dir/keras/keras_model.ckpt, the Keras model's weights and global_step 0, and returns it.

    2.15 wrote this name-based checkpoint when converting a Functional or Sequential model, and warm-started
    the estimator from it: so an estimator exports (and evaluates, predicts) the Keras model's weights before
    any training. The keys are the engine's own variable names (model_fn traced once in PREDICT mode, on
    placeholders of the model's inputs), so the warm start finds every weight. None (nothing written) in a
    TF1 graph, or for a model without Input layers: the estimator still starts from the Keras weights.
    """
    specs = model_fn.structure.input_specs
    if specs is None or not tf.executing_eagerly():
        return None
    runtime = Runtime(tf.distribute.get_strategy(), model_fn, {}, config or RunConfig(), static_shapes=False)

    def predict_graph() -> None:
        features = {spec.name: tf.compat.v1.placeholder(spec.dtype, spec.shape, name=f"keras_input_{index}")
                    for index, spec in enumerate(specs)}
        runtime.steps.call(ModeKeys.PREDICT, features, None, batch_size=None)

    tf.compat.v1.wrap_function(predict_graph, signature=[])
    keras_dir = os.path.join(model_dir, "keras")
    tf.io.gfile.makedirs(keras_dir)
    path = os.path.join(keras_dir, "keras_model.ckpt")
    variables, extra = runtime.model_variables(), []
    if model_fn.object_keys is not None:  # 2.15 wrote it with model.save_weights: object-based
        layout = model_fn.object_keys.checkpoint(variables)
        variables, extra = layout.values, [object_keys.graph_saveable(layout.graph)]
    writer.write_at(variables, path, extra)
    logging.info("Wrote the Keras model's weights to %s; the estimator warm-starts from them.", path)
    return path


def _share_session_config(keras_model: Any, config: RunConfig | None) -> None:
    """In a TF1 graph, as 2.15: Keras's backend session gets the estimator's session_config when none of the
    model's weights is initialised yet; else that session stays, with a warning if the config sets gpu_options."""
    if flavour_of(keras_model) is not TF_KERAS or tf.compat.v1.executing_eagerly_outside_functions():
        return
    from tf_keras.src.backend import set_session

    session_config = with_session_config(config or RunConfig()).session_config
    initialised = any(hasattr(weight, "_keras_initialized") for layer in keras_model.layers for weight in layer.weights)
    if not initialised:
        set_session(tf.compat.v1.Session(config=session_config))
    elif session_config.HasField("gpu_options"):
        logging.warning("The Keras backend session has already been set. The _session_config passed to "
                        "model_to_estimator will not be used.")


def serving_input_receiver_fn(keras_model: Any, default_batch_size: int | None = None) -> Callable:
    """A receiver fn whose serving signature takes the Keras model's inputs, named as its Input layers."""
    structure = ModelStructure.of(keras_model)
    if structure.input_specs is None:
        raise ValueError("The Keras model has no Input layer, so its serving inputs are unknown; build it with "
                         "keras.Input(shape, name=...), or write a serving_input_receiver_fn.")
    return build_raw_serving_input_receiver_fn({spec.name: spec for spec in structure.input_specs},
                                               default_batch_size=default_batch_size)


def _ours(output_class: Any) -> Any:
    """TensorFlow's own ExportOutput classes (tensorflow.python.saved_model.model_utils.export_output, what
    2.15's tf.estimator.export.RegressionOutput etc. were) as this project's classes of the same name."""
    from tensorflow.python.saved_model.model_utils import export_output as tf_export_output

    if isinstance(output_class, type) and issubclass(output_class, tf_export_output.ExportOutput):
        return getattr(export_output_classes, output_class.__name__, output_class)
    return output_class


def _object_based(checkpoint_format: str | None, keras_model: Any, model_dir: Any) -> bool:
    """Whether the estimator saves object-based checkpoints (2.15's checkpoint_format='checkpoint').

    None keeps the format of the checkpoints model_dir holds, else is 'checkpoint' (tf.keras.estimator's default)
    where 2.15's layout of the model and its optimizer is reproduced, and 'saver' otherwise: for a subclassed model
    (2.15 refused it with that default; tf.compat.v1.keras.estimator's default was 'saver') or an optimizer whose
    2.15 slot keys are not known, so that the default never writes keys 2.15 would not have.
    """
    if checkpoint_format not in (None, "saver", "checkpoint"):
        raise ValueError(f'Checkpoint format must be one of "checkpoint" or "saver". Got {checkpoint_format}')
    if checkpoint_format == "checkpoint" and is_subclassed(keras_model):
        raise ValueError("Object-based checkpoints are currently not supported with subclassed models.")
    if checkpoint_format is not None:
        return checkpoint_format == "checkpoint"
    if is_subclassed(keras_model):
        return False
    existing = _existing_format(model_dir)
    if existing is not None:
        return existing == "checkpoint"
    problem = layout_problem(keras_model, flavour_of(keras_model).module.layers.Layer)
    if problem is not None:
        logging.info("model_to_estimator saves name-based checkpoints (checkpoint_format='saver'): %s", problem)
    return problem is None


def _existing_format(model_dir: Any) -> str | None:
    """'checkpoint' or 'saver' for the latest checkpoint in model_dir (by its keys), None when there is none."""
    try:
        if not model_dir or not tf.io.gfile.isdir(os.fspath(model_dir)):
            return None
        latest = Checkpointer(os.fspath(model_dir), is_chief=False).latest()
        if latest is None:
            return None
        return "checkpoint" if object_keys.full_name_keys(tf.train.load_checkpoint(latest)) else "saver"
    except (RuntimeError, ValueError, OSError, tf.errors.OpError):  # unreadable or damaged: train() will say so
        return None


def _serialized_uncompiled(flavour: Flavour, keras_model: Any) -> dict:
    """The model's serialized config, its compile config left out (a tf.compat.v1 optimizer has none to give:
    tf_keras would fail serializing it). The model is rebuilt from this, never recompiled from it."""
    if flavour.is_keras3 or _v1_optimizer(keras_model.optimizer) is None:
        return flavour.serialize(keras_model)
    keras_model.get_compile_config = lambda: None  # this instance only, for this one serialization
    try:
        return flavour.serialize(keras_model)
    finally:
        del keras_model.get_compile_config


def _v1_optimizer(optimizer: Any) -> Any:
    """The tf.compat.v1.train optimizer a tf_keras model was compiled with (inside its TFOptimizer), or None."""
    inner = getattr(optimizer, "optimizer", None)
    return inner if isinstance(inner, tf.compat.v1.train.Optimizer) else None


def _tf_keras_compile_args(keras_model: Any) -> dict:
    """compile()'s arguments of a tf_keras model: its compile config's, or, for a model compiled in a TF1 graph
    (tf_keras's training_v1 Model keeps none), the ones it kept as attributes."""
    compile_config = getattr(keras_model, "_compile_config", None)
    if compile_config is not None:
        return dict(compile_config.config)
    args = dict(keras_model._get_compile_args())  # noqa: SLF001 - tf_keras's own record of compile()
    args["optimizer"] = keras_model.optimizer
    return args


def _without_name(optimizer_config: Any) -> Any:
    if isinstance(optimizer_config, dict) and isinstance(optimizer_config.get("config"), dict):
        inner = {k: v for k, v in optimizer_config["config"].items() if k != "name"}
        return dict(optimizer_config, config=inner)
    return optimizer_config  # a string ("adam"): named by its class already


def _cached_logits(outputs: Any) -> dict:
    """{position in the flattened outputs: logits} for each output tensor that carries `_keras_logits`.

    Keras (tf_keras and Keras 3) caches the logits on what a softmax or sigmoid activation returns, and its
    crossentropies (losses and metrics: binary_crossentropy, categorical_crossentropy, ...) compute from those
    logits when they are there. model.evaluate() scores its outputs so; the engine hands metric_fn gathered
    copies of the outputs, without the attribute, so the logits travel with them and are put back.
    """
    return {str(index): tensor._keras_logits  # noqa: SLF001 - Keras's own attribute
            for index, tensor in enumerate(tf.nest.flatten(outputs)) if hasattr(tensor, "_keras_logits")}


def _with_cached_logits(outputs: Any, logits: dict) -> Any:
    """`outputs` (gathered copies) with their logits cached on them again, as Keras cached them (see above)."""
    flat = [tf.identity(tensor) if str(index) in logits else tensor
            for index, tensor in enumerate(tf.nest.flatten(outputs))]
    for index, tensor in enumerate(flat):
        if str(index) in logits:
            tensor._keras_logits = logits[str(index)]  # noqa: SLF001 - Keras's own attribute
    return tf.nest.pack_sequence_as(outputs, flat)


class KerasModelFn:
    """model_fn(features, labels, mode, params) for a compiled Keras model (see the module docstring)."""

    def __init__(self, keras_model: Any, custom_objects: dict | None = None,
                 metric_names_map: dict | None = None, export_outputs: dict | None = None):
        flavour = flavour_of(keras_model)
        if flavour is None:
            raise ValueError(f"keras_model must be a Keras 3 or tf_keras model, got {type(keras_model).__name__}.")
        self._flavour: Flavour = flavour
        if not flavour.is_compiled(keras_model):
            raise ValueError(_NOT_COMPILED)
        self._custom_objects = dict(custom_objects or {})
        # A tf.compat.v1.train optimizer (tf_keras wraps it in a TFOptimizer) has no config: 2.15 used the object
        # itself in every model_fn call, as is done here.
        self._v1_optimizer = _v1_optimizer(keras_model.optimizer) if not flavour.is_keras3 else None
        if self._v1_optimizer is not None:
            self._compile_config = flavour.serialize(dict(_tf_keras_compile_args(keras_model), optimizer=None))
        else:
            # Serialized now, eagerly: an optimizer's config reads its variables, which model_fn's graph cannot.
            self._compile_config = keras_model.get_compile_config()
            if self._compile_config is None:  # a tf_keras model compiled in a TF1 graph keeps no compile config
                self._compile_config = flavour.serialize(_tf_keras_compile_args(keras_model))
        if not flavour.is_keras3 and self._v1_optimizer is None:
            # tf_keras keeps compile()'s arguments as given ("sgd"): take the optimizer built
            self._compile_config["optimizer"] = flavour.serialize(keras_model.optimizer)
        # The optimizer gets its class's default name ("adam"), not the process's count ("adam_3"): the
        # engine names its step counter by it, and a checkpoint key must not depend on what ran before.
        optimizer_config = self._compile_config["optimizer"]
        self._compile_config["optimizer"] = ([_without_name(item) for item in optimizer_config]
                                             if isinstance(optimizer_config, (list, tuple))
                                             else _without_name(optimizer_config))
        # A subclassed model is rebuilt by its own class from its get_config(), as 2.15 checked it could be
        # (model.__class__.from_config(model.get_config())): such a class is rarely registered with Keras.
        self._subclass = type(keras_model) if is_subclassed(keras_model) else None
        if self._subclass is not None:
            try:
                self._model_config = keras_model.get_config()
            except NotImplementedError as err:
                raise ValueError("Subclassed `Model`s passed to `model_to_estimator` must implement "
                                 "`Model.get_config` and `Model.from_config`.") from err
        else:
            self._model_config = {k: v for k, v in _serialized_uncompiled(flavour, keras_model).items()
                                  if k != "compile_config"}
        try:  # now, eagerly: a loss or metric missing from custom_objects fails here, not in a trace
            compiled = self._deserialize(self._compile_config)
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"Could not rebuild what the Keras model was compiled with ({err}). Pass custom losses, metrics "
                "and optimizers as model_to_estimator(custom_objects={'name': object}).") from err
        if self._v1_optimizer is None:
            self._check_optimizer(compiled["optimizer"])
        try:
            self._weights = InitialWeights(keras_model, self._rebuild, flavour.outside_functions_only)
        except (TypeError, NotImplementedError) as err:
            raise ValueError(
                f"Could not rebuild the Keras model {keras_model.name!r} from its config ({err}). Subclassed "
                "models need get_config() and from_config(); pass custom layers in custom_objects.") from err
        self.structure = ModelStructure.of(keras_model)  # serving_input_receiver_fn uses the same names
        self._optimizer_for_keys = compiled["optimizer"]
        self.object_keys: object_keys.ObjectKeys | None = None  # set by model_to_estimator: object-based saves
        self._metric_names_map = dict(metric_names_map) if metric_names_map else None
        self._export_outputs = self._checked_export_outputs(export_outputs)
        logging.info("Keras model %s: the estimator starts from its current weights (%d variables) unless "
                     "model_dir has a checkpoint.", keras_model.name, self._weights.count)

    # -- what the constructor checks ------------------------------------------------------------------
    def _check_optimizer(self, optimizer: Any) -> None:
        if isinstance(optimizer, (list, tuple)):  # a tf_keras WideDeepModel's [linear optimizer, dnn optimizer]
            if len(optimizer) != 2 or not self._splits_linear_and_dnn():
                raise ValueError(
                    f"The Keras model was compiled with a list of {len(optimizer)} optimizers; only a WideDeepModel "
                    "(its linear_model and dnn_model) takes a list, of two: [linear optimizer, dnn optimizer].")
            for item in optimizer:
                self._check_optimizer(item)
            return
        problem = self._flavour.optimizer_problem(optimizer)
        if problem:
            raise ValueError(problem)

    def _splits_linear_and_dnn(self) -> bool:
        """A model whose rebuilt copies have linear_model and dnn_model (tf_keras's WideDeepModel)."""
        module = self._flavour.module
        wide_deep = getattr(getattr(module, "experimental", None), "WideDeepModel", None)
        return (self._subclass is not None and wide_deep is not None and issubclass(self._subclass, wide_deep))

    def _checked_export_outputs(self, export_outputs: dict | None) -> dict | None:
        if export_outputs is None:
            return None
        unknown = set(export_outputs) - set(self.structure.output_names)
        if unknown:
            raise FormattedKeyError(
                f"The export_outputs passed to model_to_estimator do not match the Keras model's outputs.\n"
                f"\tExpected keys: {sorted(self.structure.output_names)}\n\texport_outputs keys: "
                f"{sorted(export_outputs)}\n\tMissed keys: {sorted(unknown)} "
                "(not among the Keras model's output names)")
        export_outputs = {key: _ours(output_class) for key, output_class in export_outputs.items()}
        for key, output_class in export_outputs.items():
            if not (isinstance(output_class, type) and issubclass(output_class, ExportOutput)):
                raise ValueError(f"export_outputs[{key!r}] must be an ExportOutput class such as "
                                 f"estimators.export.ClassificationOutput, got {output_class!r}.")
        return dict(export_outputs)

    def optimizer_keys(self) -> object_keys.OptimizerKeys:
        """Where 2.15's object-based checkpoints kept the compiled optimizer's state."""
        return optimizer_keys(self._optimizer_for_keys, self._v1_optimizer)

    # -- building ---------------------------------------------------------------------------------------
    def _deserialize(self, config: Any) -> Any:
        """A fresh object from its serialized config (Keras consumes the config it is given: pass a copy)."""
        return self._flavour.deserialize(config, self._custom_objects)

    def _rebuild(self) -> Any:
        """A fresh copy of the Keras model: deserialized from its config, or a subclassed model's class built
        from its get_config() with custom_objects in scope."""
        if self._subclass is not None:
            with self._flavour.module.utils.custom_object_scope(self._custom_objects):
                return self._subclass.from_config(copy.deepcopy(self._model_config))
        return self._deserialize(self._model_config)

    # -- model_fn ---------------------------------------------------------------------------------------
    def __call__(self, features: Any, labels: Any, mode: str, params: dict) -> TPUEstimatorSpec:
        del params
        with self._flavour.tf2_layers():
            with self._weights.applied():
                model = self._rebuild()
            inputs, sample_weight = self.structure.inputs(features)
            training = mode == ModeKeys.TRAIN
            outputs = model(inputs, training=training)
        if self.object_keys is not None:
            self.object_keys.record(weight_paths(model, self._flavour.module.layers.Layer))
        scaffold_fn = self._scaffold_fn()
        if mode == ModeKeys.PREDICT:
            predictions = self.structure.predictions(outputs)
            return TPUEstimatorSpec(mode, predictions=predictions, export_outputs=self._exports(predictions),
                                    scaffold_fn=scaffold_fn)

        targets = self.structure.targets(labels, outputs)
        compiled = self._deserialize({k: self._compile_config.get(k) for k in ("loss", "loss_weights")})
        if self._flavour.is_keras3:  # tf_keras divides a whole-batch loss by the replicas too: nothing to check
            compiled["loss"] = checked_losses(compiled["loss"])
        optimizer = self._optimizer() if training else None
        keras_loss = self._flavour.compute_loss(model, compiled, inputs, targets, outputs, sample_weight, optimizer,
                                                training)
        replicas = tf.distribute.get_strategy().num_replicas_in_sync  # what Keras divided its loss by
        loss = keras_loss * tf.cast(replicas, keras_loss.dtype) if replicas > 1 else keras_loss
        if training:
            # The step advances the global step, as 2.15's (the optimizer's iterations were the global step):
            # the graph path stops on it; the TF2 path ends every step one higher whatever train_op does.
            train_op = self._train_op(model, optimizer, keras_loss)
            return TPUEstimatorSpec(mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn)
        tensors = {"y_true": targets, "y_pred": outputs}
        if sample_weight is not None:
            tensors["sample_weight"] = sample_weight
        logits = _cached_logits(outputs)
        if logits:
            tensors["y_pred_logits"] = logits
        metrics = self._compile_config.get("metrics") or self._compile_config.get("weighted_metrics")
        return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(self._metric_fn, tensors) if metrics else None,
                                scaffold_fn=scaffold_fn)

    def _scaffold_fn(self) -> Callable | None:
        """On the graph path, 2.15's Scaffold with a Saver of object-based keys (saves as the TF2 path does)."""
        if self.object_keys is None or tf.executing_eagerly() or tf.inside_function():
            return None  # the TF2 path (traced in a tf.function): the Checkpointer writes the layout itself
        keys = self.object_keys
        return lambda: tf.compat.v1.train.Scaffold(saver=ObjectKeySaver(keys))

    def _train_op(self, model: Any, optimizer: Any, keras_loss: Any) -> Any:
        """The update of one training step: the replicas' gradients summed (see the module docstring).

        A WideDeepModel compiled with [linear optimizer, dnn optimizer] updates its linear_model's variables with
        the first and its dnn_model's with the second, as its own train step does.
        """
        step = tf.compat.v1.train.get_global_step()
        if not isinstance(optimizer, (list, tuple)):
            return CrossShardOptimizer(optimizer, reduction="sum").minimize(
                self._flavour.scale_loss(optimizer, keras_loss), global_step=step, var_list=model.trainable_variables)
        parts = [(CrossShardOptimizer(item, reduction="sum"), list(variables)) for item, variables in
                 zip(optimizer, (model.linear_model.trainable_variables, model.dnn_model.trainable_variables),
                     strict=True)]
        gradients = [wrapped.compute_gradients(keras_loss, var_list=variables) for wrapped, variables in parts]
        updates = [wrapped.apply_gradients(pairs, global_step=step if index == 0 else None)
                   for index, ((wrapped, _), pairs) in enumerate(zip(parts, gradients, strict=True))]
        return tf.group(*updates)

    def _optimizer(self) -> Any:
        """The optimizer of this training call: a fresh one of the compiled optimizer's config, or the
        tf.compat.v1.train optimizer the model was compiled with (it has no config; 2.15 reused it too)."""
        if self._v1_optimizer is not None:
            return self._v1_optimizer
        return self._deserialize(self._compile_config["optimizer"])

    def _exports(self, predictions: dict) -> dict | None:
        if self._export_outputs is None:
            return None  # the engine's default: serving_default, a PredictOutput of the predictions
        exports = {_DEFAULT_SERVING_KEY: PredictOutput(predictions)}
        for key, output_class in self._export_outputs.items():
            exports[key] = output_class(predictions[key])
        return exports

    def _metric_fn(self, y_true: Any, y_pred: Any, sample_weight: Any = None, y_pred_logits: dict | None = None
                   ) -> dict:
        """The compiled metrics, named as model.evaluate() names them, updated with the real examples.

        `y_pred_logits`: the logits Keras cached on softmax/sigmoid outputs (see _cached_logits), put back on
        the gathered outputs so that the metrics read them as model.evaluate()'s do.
        """
        if y_pred_logits:
            y_pred = _with_cached_logits(y_pred, y_pred_logits)
        config = self._deserialize({k: self._compile_config.get(k) for k in ("metrics", "weighted_metrics")})
        output_names = list(self.structure.keras_output_names or []) or None
        metrics = self._flavour.compiled_metrics(config, output_names, y_true, y_pred, sample_weight)
        return self._renamed(metrics)

    def _renamed(self, metrics: dict) -> dict:
        names = self._metric_names_map
        if not names:
            return metrics
        unknown = set(metrics) - set(names)
        if unknown:  # 2.15's phrases ("do not exist", "unexpected keys"), which programs match
            raise ValueError(f"Invalid `metric_names_map`. The Keras model's metric names {sorted(unknown)} do not "
                             f"exist in the `metric_names_map` dictionary (its metrics: {sorted(metrics)}).")
        extra = set(names) - set(metrics)
        if extra:
            raise ValueError(f"Invalid `metric_names_map`. There are unexpected keys in the `metric_names_map` "
                             f"dictionary: {sorted(extra)}. Expected keys: {sorted(metrics)}.")
        return {names[name]: metric for name, metric in metrics.items()}
