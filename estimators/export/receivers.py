"""Serving input receivers: what a SavedModel's signatures take, and the features model_fn gets from it.

As in tf.estimator, a serving_input_receiver_fn is graph code: it builds `tf.compat.v1.placeholder`s
(the signature's inputs) and any ops that turn them into features; the exporter calls it inside the
export graph. The TF2-native form is accepted too: receiver tensors given as `tf.TensorSpec`s, which
the exporter turns into placeholders, with `features` the same specs or a function of the inputs.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

DEFAULT_FEATURE_KEY = "feature"
DEFAULT_RECEIVER_KEY = "input"
DEFAULT_LABEL_KEY = "label"
EXAMPLES_KEY = "examples"

_COMPOSITE = (tf.SparseTensor, tf.RaggedTensor)


def _is_input(value: Any, allow_spec: bool) -> bool:
    return isinstance(value, (tf.Tensor, *_COMPOSITE)) or (allow_spec and isinstance(value, tf.TensorSpec))


def _converts_as_labeled_tensor(value: Any) -> bool:
    """2.15's carve-out for LabeledTensor-like objects: a `.tensor` attribute and a registered conversion."""
    if not hasattr(value, "tensor"):
        return False
    try:
        tf.convert_to_tensor(value)
    except (TypeError, ValueError):
        return False
    return True


def _check_value(value: Any, name: Any, label: str, allow_spec: bool = True) -> None:
    if not (_is_input(value, allow_spec) or _converts_as_labeled_tensor(value)):
        where = f" {name}" if name is not None else ""
        raise ValueError(
            f"{label}{where} must be a Tensor, SparseTensor, or RaggedTensor (or a tf.TensorSpec), got "
            f"{type(value).__name__}: {value!r}."
        )


def _check_key(key: Any, label: str, allow_int: bool) -> None:
    if isinstance(key, str) or (allow_int and isinstance(key, int) and not isinstance(key, bool)):
        return
    kinds = "strings or ints" if allow_int else "strings"
    raise ValueError(f"{label} keys must be {kinds}: {key!r}.")


def wrap_and_check(values: Any, label: str, default_key: str, allow_int_keys: bool = False) -> dict:
    """`values` as a dict (one tensor goes under `default_key`); ValueError for a bad key or value."""
    if values is None:
        raise ValueError(f"{label}s must be defined.")
    if not isinstance(values, Mapping):
        values = {default_key: values}
    for key, value in values.items():
        _check_key(key, label, allow_int_keys)
        _check_value(value, key, label)
    return dict(values)


def _check_alternatives(alternatives: Any) -> dict | None:
    if alternatives is None:
        return None
    if not isinstance(alternatives, Mapping):
        raise ValueError(f"receiver_tensors_alternatives must be a dict: {alternatives!r}.")
    return {
        name: wrap_and_check(group, "receiver_tensors_alternative", DEFAULT_RECEIVER_KEY)
        for name, group in alternatives.items()
    }


class ServingInputReceiver(
        collections.namedtuple("ServingInputReceiver", ["features", "receiver_tensors",
                                                        "receiver_tensors_alternatives"])):
    """What a serving_input_receiver_fn returns: model_fn's features and the signature's inputs.

    `features`: a tensor or a dict of str/int -> tensor (one tensor is passed to model_fn as
    `{"feature": tensor}`; use TensorServingInputReceiver to pass it bare), or a function of the
    receiver tensors dict (with TensorSpec receivers). `receiver_tensors`: a tensor or a dict of
    str -> tensor (or TensorSpec), the default signatures' inputs; one tensor is named "input".
    `receiver_tensors_alternatives`: {name: tensor or dict}, extra input groups, each giving one
    more signature per export output, named "<name>:<output key>".
    """

    def __new__(cls, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: dict | None = None):
        if not callable(features):
            features = wrap_and_check(features, "feature", DEFAULT_FEATURE_KEY, allow_int_keys=True)
        receiver_tensors = wrap_and_check(receiver_tensors, "receiver_tensor", DEFAULT_RECEIVER_KEY)
        alternatives = _check_alternatives(receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver_tensors, alternatives)


class TensorServingInputReceiver(
        collections.namedtuple("TensorServingInputReceiver", ["features", "receiver_tensors",
                                                              "receiver_tensors_alternatives"])):
    """A ServingInputReceiver whose one feature reaches model_fn as a bare tensor, not a dict.

    `features`: one Tensor/SparseTensor/RaggedTensor (or TensorSpec, or a function of the receiver
    tensors dict). `receiver_tensors` and its alternatives are as for ServingInputReceiver.
    """

    def __new__(cls, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: dict | None = None):
        if features is None:
            raise ValueError("features must be defined.")
        if not callable(features):
            _check_value(features, None, "feature")
        receiver_tensors = wrap_and_check(receiver_tensors, "receiver_tensor", DEFAULT_RECEIVER_KEY)
        alternatives = _check_alternatives(receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver_tensors, alternatives)


class UnsupervisedInputReceiver(ServingInputReceiver):
    """A ServingInputReceiver without alternatives: features and the inputs that feed them, no labels.

    tf.estimator's return type for a training or evaluation input receiver fn of a model without labels.
    """

    def __new__(cls, features: Any, receiver_tensors: Any):
        return super().__new__(cls, features, receiver_tensors, None)


class SupervisedInputReceiver(
        collections.namedtuple("SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])):
    """What a training or evaluation input receiver fn returns: features, labels and the inputs feeding them.

    `features` and `labels`: a tensor or a dict of str/int -> tensor each, kept as given (model_fn gets
    them as they are); `receiver_tensors`: a tensor or a dict of str -> tensor (one tensor is named
    "input"). No alternatives: those serve serving signatures only.
    """

    def __new__(cls, features: Any, labels: Any, receiver_tensors: Any):
        wrap_and_check(features, "feature", DEFAULT_FEATURE_KEY, allow_int_keys=True)  # checked, kept as given
        wrap_and_check(labels, "label", DEFAULT_LABEL_KEY, allow_int_keys=True)
        receiver_tensors = wrap_and_check(receiver_tensors, "receiver_tensor", DEFAULT_RECEIVER_KEY)
        return super().__new__(cls, features, labels, receiver_tensors)


Receiver = ServingInputReceiver | TensorServingInputReceiver


def _batch_shape(shape: tf.TensorShape, batch_size: int | None) -> tf.TensorShape:
    """`shape` with its first dimension replaced by `batch_size` (unknown rank stays unknown)."""
    if shape.rank is None:
        return shape
    return tf.TensorShape([batch_size]).concatenate(shape[1:])  # a scalar example becomes a vector, as in 2.15


def _input_spec(value: Any, default_batch_size: int | None) -> tf.TensorSpec:
    """The spec a raw serving input is fed with: a tensor's dtype and shape with a free batch dimension."""
    if isinstance(value, tf.TensorSpec):
        shape = value.shape
        if default_batch_size is not None:
            shape = _batch_shape(shape, default_batch_size)
        return tf.TensorSpec(shape, value.dtype)
    if hasattr(value, "dtype") and hasattr(value, "shape"):  # tensors, variables, numpy arrays
        return tf.TensorSpec(_batch_shape(tf.TensorShape(value.shape), default_batch_size), tf.as_dtype(value.dtype))
    raise ValueError(
        f"build_raw_serving_input_receiver_fn takes tensors, arrays or tf.TensorSpecs, got "
        f"{type(value).__name__}: {value!r}."
    )


def build_raw_serving_input_receiver_fn(features: Any, default_batch_size: int | None = None
                                        ) -> Callable[[], Receiver]:
    """A receiver fn whose signature takes model_fn's features as they are.

    `features`: a dict of str -> tensor, array or tf.TensorSpec (model_fn gets a dict with the same
    keys), or one of them (model_fn gets one tensor; the signature input is named "input"). A
    tensor's first dimension becomes `default_batch_size` (None: any batch); a TensorSpec keeps
    its shape unless default_batch_size is given.
    """
    if isinstance(features, Mapping):
        if not features:
            raise ValueError("build_raw_serving_input_receiver_fn needs at least one feature.")
        specs = {}
        for key, value in features.items():
            _check_key(key, "feature", allow_int=False)
            specs[key] = _input_spec(value, default_batch_size)
    else:
        single = _input_spec(features, default_batch_size)

    def serving_input_receiver_fn() -> Receiver:
        if isinstance(features, Mapping):
            inputs = {key: tf.compat.v1.placeholder(spec.dtype, spec.shape, name=key) for key, spec in specs.items()}
            return ServingInputReceiver(inputs, inputs)
        tensor = tf.compat.v1.placeholder(single.dtype, single.shape, name=DEFAULT_RECEIVER_KEY)
        return TensorServingInputReceiver(tensor, tensor)

    return serving_input_receiver_fn


def _specs(values: Any, default_batch_size: int | None) -> dict | tf.TensorSpec:
    """A dict of str -> spec for a dict of inputs, one spec for one input."""
    if isinstance(values, Mapping):
        specs = {}
        for key, value in values.items():
            _check_key(key, "feature", allow_int=False)
            specs[key] = _input_spec(value, default_batch_size)
        return specs
    return _input_spec(values, default_batch_size)


def build_raw_supervised_input_receiver_fn(features: Any, labels: Any, default_batch_size: int | None = None
                                           ) -> Callable[[], SupervisedInputReceiver]:
    """A receiver fn whose inputs are model_fn's features and labels as they are (for training/evaluation graphs).

    `features`, `labels`: a dict of str -> tensor, array or tf.TensorSpec, or one of them (then fed
    as "input" / "label"); their keys must differ. Placeholders get each one's dtype and shape with
    the first dimension `default_batch_size` (None: any batch; a TensorSpec keeps its shape unless
    default_batch_size is given). tf.estimator.experimental.build_raw_supervised_input_receiver_fn.
    """
    feature_keys = set(features) if isinstance(features, Mapping) else {DEFAULT_RECEIVER_KEY}
    label_keys = set(labels) if isinstance(labels, Mapping) else {DEFAULT_LABEL_KEY}
    overlap = feature_keys & label_keys
    if overlap:
        raise ValueError(f"Features and labels must have distinct keys. Found overlapping keys: {overlap}")
    feature_specs = _specs(features, default_batch_size)
    label_specs = _specs(labels, default_batch_size)

    def placeholders(specs: Any, single_key: str) -> tuple[Any, dict]:
        if isinstance(specs, dict):
            made = {key: tf.compat.v1.placeholder(spec.dtype, spec.shape, name=key) for key, spec in specs.items()}
            return made, made
        tensor = tf.compat.v1.placeholder(specs.dtype, specs.shape, name=single_key)
        return tensor, {single_key: tensor}

    def supervised_input_receiver_fn() -> SupervisedInputReceiver:
        feature_tensors, feature_inputs = placeholders(feature_specs, DEFAULT_RECEIVER_KEY)
        label_tensors, label_inputs = placeholders(label_specs, DEFAULT_LABEL_KEY)
        return SupervisedInputReceiver(feature_tensors, label_tensors, {**feature_inputs, **label_inputs})

    return supervised_input_receiver_fn


def _free_batch(spec: Any) -> Any:
    if isinstance(spec, tf.TensorSpec):
        return tf.TensorSpec(_batch_shape(spec.shape, None), spec.dtype, spec.name)
    raise ValueError(f"build_supervised_input_receiver_fn_from_input_fn takes dense features and labels, got {spec}.")


def build_supervised_input_receiver_fn_from_input_fn(input_fn: Callable, **input_fn_args: Any
                                                     ) -> Callable[[], SupervisedInputReceiver]:
    """A raw supervised receiver fn with the features and labels input_fn gives (any batch size).

    input_fn(**input_fn_args) is called once, now, in a graph of its own; it returns a Dataset of
    (features, labels) or a (features, labels) pair of tensors.
    """
    with tf.Graph().as_default():
        result = input_fn(**input_fn_args)
        if isinstance(result, tf.data.Dataset):
            result = tf.nest.map_structure(_free_batch, result.element_spec)
        if not isinstance(result, (tuple, list)) or len(result) != 2 or result[1] is None:
            raise ValueError("build_supervised_input_receiver_fn_from_input_fn needs an input_fn that gives "
                             f"(features, labels); it gave {result!r}.")
        features, labels = tf.nest.map_structure(
            lambda t: t if isinstance(t, tf.TensorSpec) else tf.TensorSpec(_batch_shape(t.shape, None), t.dtype),
            tuple(result))
    return build_raw_supervised_input_receiver_fn(features, labels)


def build_parsing_serving_input_receiver_fn(feature_spec: dict, default_batch_size: int | None = None
                                            ) -> Callable[[], Receiver]:
    """A receiver fn whose signature takes serialized tf.Examples ("examples", a string vector).

    They are parsed with tf.io.parse_example(feature_spec) into model_fn's features dict.
    """
    if not isinstance(feature_spec, Mapping) or not feature_spec:
        raise ValueError(
            "build_parsing_serving_input_receiver_fn needs a non-empty dict of feature name -> "
            f"tf.io.FixedLenFeature/VarLenFeature/..., got {feature_spec!r}."
        )

    def serving_input_receiver_fn() -> Receiver:
        examples = tf.compat.v1.placeholder(tf.string, [default_batch_size], name="input_example_tensor")
        features = tf.io.parse_example(examples, dict(feature_spec))
        return ServingInputReceiver(features, {EXAMPLES_KEY: examples})

    return serving_input_receiver_fn


def materialize(receiver: Any, graph: tf.Graph) -> Receiver:
    """The receiver with every TensorSpec made a placeholder in `graph` and features computed.

    Called inside the export graph, after serving_input_receiver_fn; checks that every input
    lives in that graph (a receiver built eagerly cannot feed a signature).
    """
    if not isinstance(receiver, (ServingInputReceiver, TensorServingInputReceiver)):
        raise ValueError(
            "serving_input_receiver_fn must return estimators.export.ServingInputReceiver or "
            f"TensorServingInputReceiver, got {type(receiver).__name__}; see "
            "build_raw_serving_input_receiver_fn and build_parsing_serving_input_receiver_fn."
        )
    made: dict[int, Any] = {}

    def placeholders(group: dict) -> dict:
        result = {}
        for key, value in group.items():
            if isinstance(value, tf.TensorSpec):
                if id(value) not in made:
                    made[id(value)] = tf.compat.v1.placeholder(value.dtype, value.shape, name=key)
                value = made[id(value)]
            _check_in_graph(value, key, graph)
            result[key] = value
        return result

    inputs = placeholders(receiver.receiver_tensors)
    alternatives = None
    if receiver.receiver_tensors_alternatives is not None:
        alternatives = {name: placeholders(group) for name, group in receiver.receiver_tensors_alternatives.items()}

    features = receiver.features
    if callable(features):
        features = features(dict(inputs))
    else:
        def resolve(value):
            if not isinstance(value, tf.TensorSpec):
                return value
            if id(value) not in made:
                raise ValueError(
                    f"features hold a tf.TensorSpec ({value}) that is not one of receiver_tensors; a "
                    "TensorSpec feature must be the very object given as a receiver tensor, or pass "
                    "features=a function of the receiver tensors dict."
                )
            return made[id(value)]

        features = tf.nest.map_structure(resolve, features)
    return type(receiver)(features, inputs, alternatives)


def _check_in_graph(value: Any, key: str, graph: tf.Graph) -> None:
    if isinstance(value, _COMPOSITE):
        raise ValueError(
            f"receiver tensor {key!r} is a {type(value).__name__}; TF2 SavedModel signatures take dense "
            "tensors only. Receive a dense tensor (or serialized tf.Examples) and build the "
            f"{type(value).__name__} from it in serving_input_receiver_fn."
        )
    if getattr(value, "graph", None) is not graph:
        raise ValueError(
            f"receiver tensor {key!r} was not built inside the export graph (made eagerly, or in "
            "another graph). Create it inside serving_input_receiver_fn with "
            "tf.compat.v1.placeholder, or give a tf.TensorSpec."
        )
