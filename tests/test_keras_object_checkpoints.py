"""model_to_estimator's object-based checkpoints (2.15's checkpoint_format='checkpoint', tf.keras.estimator's default,
and the default here too where 2.15's layout is reproduced).

Keys, full names and losses are the real 2.15's (tests/reference/keras_object_checkpoints_215.json, written by
make_keras_object_checkpoints_215.py there) for the equivalent tf.keras model; ours adds only the engine's
own entries (the Keras 3 optimizer's step counter, the input position), outside the object graph.
"""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.training import saver as saver_lib

from estimators import model_to_estimator
from estimators.checkpoint import finite, object_keys
from estimators.checkpoint.checkpointer import Checkpointer
from estimators.keras.model import serving_input_receiver_fn

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "reference", "keras_object_checkpoints_215.json")))
# A Keras 3 optimizer's step counter, a Keras 3 layer's seed generator (Dropout, RNNs), the input position.
OURS_ONLY = ("/iteration", "seed_generator_state", "estimators/input_position")
L = keras.layers


def _data(xshape=(3,), yshape=(1,)):
    x = np.linspace(0, 1, 8 * int(np.prod(xshape)), dtype=np.float32).reshape((8, *xshape))
    return x, np.ones((8, *yshape), np.float32)


def _input_fn(name, xshape=(3,), yshape=(1,)):
    x, y = _data(xshape, yshape)
    return lambda: tf.data.Dataset.from_tensor_slices(({name: x}, y)).repeat().batch(4)


def _two_dense(optimizer, units=1, second=True):
    layers = [keras.Input((3,), name="dense_input"), L.Dense(2 if second else units, name="dense",
                                                             kernel_initializer="ones")]
    if second:
        layers.append(L.Dense(units, name="out", kernel_initializer="ones"))
    model = keras.Sequential(layers)
    model.compile(optimizer, "mse")
    return model


def _trained(model, model_dir, name="dense_input", xshape=(3,), yshape=(1,), checkpoint_format="checkpoint"):
    estimator = model_to_estimator(keras_model=model, model_dir=str(model_dir), checkpoint_format=checkpoint_format)
    estimator.train(_input_fn(name, xshape, yshape), steps=2)
    return estimator


def _keys(path):
    return sorted(key for key in tf.train.load_checkpoint(path).get_variable_to_shape_map()
                  if not key.endswith(OURS_ONLY))


@pytest.mark.parametrize("case, optimizer", [
    ("adam", "adam"), ("rmsprop", "rmsprop"), ("sgd_momentum", lambda: keras.optimizers.SGD(0.01, momentum=0.9))])
def test_object_checkpoints_hold_2_15s_keys_and_evaluate_to_its_loss(tmp_path, case, optimizer):
    estimator = _trained(_two_dense(optimizer() if callable(optimizer) else optimizer), tmp_path)
    assert _keys(estimator.latest_checkpoint()) == REFERENCE[case]["keys"]
    result = estimator.evaluate(_input_fn("dense_input"), steps=1)
    assert result["loss"] == pytest.approx(REFERENCE[case]["loss"], rel=1e-5)


@pytest.mark.parametrize("case, optimizer", [
    ("rmsprop_momentum", lambda: keras.optimizers.RMSprop(0.01, momentum=0.5)), ("adadelta", "adadelta"),
    ("adagrad", "adagrad"), ("ftrl", "ftrl"), ("sgd", "sgd")])
def test_optimizer_state_resumes_from_object_checkpoints_with_2_15s_keys_and_loss(tmp_path, case, optimizer):
    estimator = _trained(_two_dense(optimizer() if callable(optimizer) else optimizer), tmp_path)
    estimator.train(_input_fn("dense_input"), steps=1)  # reads the first call's checkpoint back
    assert _keys(estimator.latest_checkpoint()) == REFERENCE[case]["keys"]
    result = estimator.evaluate(_input_fn("dense_input"), steps=1)
    assert (result["global_step"], result["loss"]) == (3, pytest.approx(REFERENCE[case]["loss"], rel=1e-5))


@pytest.mark.parametrize("checkpoint_format", ["checkpoint", "saver"])
def test_a_nadam_model_warm_starts_from_its_weights_and_resumes_as_if_never_stopped(tmp_path, checkpoint_format):
    # Keras 3's Nadam keeps u_product in a trainable variable of its own. It is no model weight, so the warm
    # start from model_dir/keras (the model's weights) must not ask for it: TF1's TRAINABLE_VARIABLES never held
    # an optimizer's variables. The resume must restore it with the slots.
    split = _trained(_two_dense("nadam"), tmp_path / "split", checkpoint_format=checkpoint_format)
    split.train(_input_fn("dense_input"), steps=1)
    whole = model_to_estimator(keras_model=_two_dense("nadam"), model_dir=str(tmp_path / "whole"),
                               checkpoint_format=checkpoint_format)
    whole.train(_input_fn("dense_input"), steps=3)
    for name in ("dense/kernel", "out/kernel", "out/bias"):
        np.testing.assert_allclose(split.get_variable_value(name), whole.get_variable_value(name), rtol=1e-6)
    assert not np.allclose(split.get_variable_value("dense/kernel"), 1.0)  # it trained


def test_multi_head_attention_sublayers_are_keyed_by_their_private_attributes_as_in_2_15(tmp_path):
    inputs = keras.Input((4, 2), name="x")
    attention = L.MultiHeadAttention(2, 3, name="mha", kernel_initializer="ones")(inputs, inputs)
    model = keras.Model(inputs, L.Dense(1, name="out", kernel_initializer="ones")(L.Flatten()(attention)))
    model.compile("adam", "mse")
    estimator = _trained(model, tmp_path, name="x", xshape=(4, 2))
    assert _keys(estimator.latest_checkpoint()) == REFERENCE["multi_head_attention"]["keys"]
    result = estimator.evaluate(_input_fn("x", (4, 2)), steps=1)
    assert result["loss"] == pytest.approx(REFERENCE["multi_head_attention"]["loss"], rel=1e-5)


def test_a_tf_keras_multi_head_attention_is_keyed_as_in_2_15(tmp_path):
    tf_keras = pytest.importorskip("tf_keras")
    inputs = tf_keras.Input((4, 2), name="x")
    attention = tf_keras.layers.MultiHeadAttention(2, 3, name="mha", kernel_initializer="ones")(inputs, inputs)
    flat = tf_keras.layers.Flatten()(attention)
    model = tf_keras.Model(inputs, tf_keras.layers.Dense(1, name="out", kernel_initializer="ones")(flat))
    model.compile("adam", "mse")
    estimator = _trained(model, tmp_path, name="x", xshape=(4, 2))
    keys = [key for key in _keys(estimator.latest_checkpoint()) if key != "iteration"]  # tf_keras's step counter
    assert keys == REFERENCE["multi_head_attention"]["keys"]


def test_embeddings_are_keyed_as_in_2_15(tmp_path):
    inputs = keras.Input((3,), name="x", dtype="int32")
    embedded = L.Flatten()(L.Embedding(5, 2, name="embedding", embeddings_initializer="ones")(inputs))
    model = keras.Model(inputs, L.Dense(1, name="out", kernel_initializer="ones")(embedded))
    model.compile("sgd", "mse")  # Keras 3's Adam sums duplicate sparse indices differently
    _assert_keys_and_loss_are_2_15s(model, tmp_path, "embedding")


def _assert_keys_and_loss_are_2_15s(model, tmp_path, case):
    estimator = _trained(model, tmp_path, name="x")
    assert _keys(estimator.latest_checkpoint()) == REFERENCE[case]["keys"]
    assert estimator.evaluate(_input_fn("x"), steps=1)["loss"] == pytest.approx(REFERENCE[case]["loss"], rel=1e-5)


@keras.saving.register_keras_serializable(package="test_keras_object_checkpoints")
class _SharedNames(L.Layer):
    """make_keras_object_checkpoints_215.py's SharedNames: two weights named `w` (and two `v`, kept in a list),
    sublayers in a dict and in a private attribute."""

    def build(self, input_shape):
        self.a = self.add_weight(name="w", shape=(input_shape[-1], 1), initializer="ones")
        self.b = self.add_weight(name="w", shape=(1,), initializer="zeros")
        self.listed = [self.add_weight(name="v", shape=(1,), initializer="zeros"),
                       self.add_weight(name="v", shape=(1,), initializer="zeros")]
        self.parts = {"p": L.Dense(1, name="pd", kernel_initializer="ones"),
                      "q": [L.Dense(1, name="qd", kernel_initializer="ones")]}
        self._hidden = L.Dense(1, name="hid", kernel_initializer="ones")

    def call(self, x):
        return (x @ self.a + self.b + self.listed[0] + self.listed[1] + self.parts["p"](x) + self.parts["q"][0](x)
                + self._hidden(x))


def test_a_weight_whose_name_a_later_weight_reuses_goes_by_its_attribute_as_in_2_15(tmp_path):
    inputs = keras.Input((3,), name="x")
    model = keras.Model(inputs, _SharedNames(name="two")(inputs))
    model.compile("sgd", "mse")
    _assert_keys_and_loss_are_2_15s(model, tmp_path, "shared_names")


@keras.saving.register_keras_serializable(package="test_keras_object_checkpoints")
class _Unreachable(L.Layer):
    """Its first `w` is held by no attribute: 2.15's object graph had no path to it."""

    def build(self, input_shape):
        self.add_weight(name="w", shape=(input_shape[-1], 1), initializer="ones")
        self.b = self.add_weight(name="w", shape=(1,), initializer="zeros")

    def call(self, x):
        return x @ self.weights[0] + self.b


def _unreachable_model():
    inputs = keras.Input((3,), name="x")
    model = keras.Model(inputs, _Unreachable(name="two")(inputs))
    model.compile("sgd", "mse")
    return model


def test_a_weight_no_path_reaches_is_refused_before_anything_is_saved(tmp_path):
    with pytest.raises(ValueError, match="cannot place weight 'w' of layer 'two'.*distinct names"):
        model_to_estimator(keras_model=_unreachable_model(), model_dir=str(tmp_path), checkpoint_format="checkpoint")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path / "keras")) is None


def test_by_default_a_model_2_15_could_not_lay_out_gets_name_based_checkpoints(tmp_path):
    estimator = _trained(_unreachable_model(), tmp_path, name="x", checkpoint_format=None)
    assert "two/w" in estimator.get_variable_names()


def test_by_default_an_optimizer_whose_2_15_keys_are_unknown_gets_name_based_checkpoints(tmp_path):
    estimator = _trained(_two_dense("adamax"), tmp_path, checkpoint_format=None)
    assert "dense/kernel" in estimator.get_variable_names()


def test_by_default_an_optimizer_with_state_2_15_had_not_gets_name_based_checkpoints(tmp_path):
    estimator = _trained(_two_dense(keras.optimizers.Adam(use_ema=True)), tmp_path, checkpoint_format=None)
    assert "dense/kernel" in estimator.get_variable_names()


def test_by_default_a_model_without_weights_yet_gets_name_based_checkpoints(tmp_path):
    model = keras.Sequential([L.Dense(2, name="dense"), L.Dense(1, name="out")])  # built at its first call
    model.compile("adam", "mse")
    estimator = model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    x, y = _data()
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(4), steps=2)
    names = estimator.get_variable_names()
    assert any(n.endswith("/dense/kernel") for n in names)  # sequential_<n>/dense/kernel: Keras numbers models
    assert not any(n.startswith("layer_with_weights") for n in names)


def test_by_default_a_tf_keras_legacy_optimizer_gets_name_based_checkpoints(tmp_path):
    tf_keras = pytest.importorskip("tf_keras")
    model = tf_keras.Sequential([tf_keras.layers.Dense(1, input_shape=(3,), name="dense")])
    model.compile(tf_keras.optimizers.legacy.Adam(), "mse")
    estimator = _trained(model, tmp_path, checkpoint_format=None)
    assert "dense/kernel" in estimator.get_variable_names()


def test_centered_rmsprop_with_momentum_keeps_its_three_slots_as_2_15_named_them(tmp_path):
    model = _two_dense(keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True), units=2, second=False)
    estimator = _trained(model, tmp_path, yshape=(2,))
    assert _keys(estimator.latest_checkpoint()) == REFERENCE["rmsprop_centered"]["keys"]


def test_object_graph_full_names_are_2_15s_variable_names(tmp_path):
    estimator = _trained(_two_dense("adam"), tmp_path)
    assert saver_lib.object_graph_key_mapping(estimator.latest_checkpoint()) == REFERENCE["adam"]["full_names"]


def test_rnn_cells_are_under_cell_as_in_2_15(tmp_path):
    model = keras.Sequential([keras.Input((4,), name="reshape_input"), L.Reshape([4, 1]),
                              L.LSTM(2, return_sequences=True), L.GRU(2), L.Dense(1)])
    model.compile("sgd", "mse")
    estimator = _trained(model, tmp_path, name="reshape_input", xshape=(4,))
    assert _keys(estimator.latest_checkpoint()) == REFERENCE["lstm"]["keys"]


def test_nested_models_and_batch_norm_statistics_are_keyed_as_in_2_15(tmp_path):
    inputs = keras.Input((3,), name="x")
    hidden = L.Dropout(0.1)(L.BatchNormalization(name="bn")(L.Dense(2, name="hidden")(inputs)))
    inner = keras.Sequential([keras.Input((2,)), L.Dense(2, name="inner_a"), L.Dense(1, name="inner_b")],
                             name="inner")
    model = keras.Model(inputs, inner(hidden))
    model.compile("adam", "mse")
    estimator = _trained(model, tmp_path, name="x")
    assert _keys(estimator.latest_checkpoint()) == REFERENCE["functional_nested"]["keys"]


def test_model_dir_keras_holds_the_starting_weights_object_based(tmp_path):
    model = _two_dense("sgd")
    model_to_estimator(keras_model=model, model_dir=str(tmp_path), checkpoint_format="checkpoint")
    keras_dir = tf.train.latest_checkpoint(str(tmp_path / "keras"))
    assert keras_dir.endswith("keras_model.ckpt")
    mapping = saver_lib.object_graph_key_mapping(keras_dir)
    np.testing.assert_array_equal(tf.train.load_variable(keras_dir, mapping["dense/kernel"]), np.ones((3, 2)))
    assert tf.train.load_variable(keras_dir, mapping["global_step"]) == 0


def test_the_export_keys_its_variables_as_the_checkpoint_does(tmp_path):
    model = _two_dense("adam")
    estimator = _trained(model, tmp_path / "model")
    export = estimator.export_saved_model(str(tmp_path / "export"), serving_input_receiver_fn(model)).decode()
    variables = os.path.join(export, "variables", "variables")
    key = saver_lib.object_graph_key_mapping(variables)["dense/bias"]
    assert key == "layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE"
    np.testing.assert_array_equal(tf.train.load_variable(variables, key),
                                  tf.train.load_variable(estimator.latest_checkpoint(), key))


def test_a_tf_keras_model_loads_the_trained_weights_with_load_weights(tmp_path):
    tf_keras = pytest.importorskip("tf_keras")
    estimator = _trained(_two_dense("adam"), tmp_path)
    copy = tf_keras.Sequential([tf_keras.layers.Dense(2, input_shape=(3,), name="dense"),
                                tf_keras.layers.Dense(1, name="out")])
    copy.load_weights(tf.train.latest_checkpoint(str(tmp_path))).expect_partial()
    trained = estimator.get_variable_value("layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    np.testing.assert_array_equal(copy.layers[1].kernel.numpy(), trained)
    assert not np.allclose(trained, 1.0)


def test_training_resumes_from_its_own_object_checkpoint(tmp_path):
    estimator = _trained(_two_dense("adam"), tmp_path)
    estimator.train(_input_fn("dense_input"), steps=1)
    assert estimator.evaluate(_input_fn("dense_input"), steps=1)["global_step"] == 3


def test_saver_format_keeps_tf_estimator_names(tmp_path):
    estimator = _trained(_two_dense("adam"), tmp_path, checkpoint_format="saver")
    assert "dense/kernel" in estimator.get_variable_names()
    assert not any(name.endswith(object_keys.VALUE) for name in estimator.get_variable_names())


def test_by_default_a_fresh_model_dir_gets_2_15s_object_based_checkpoints(tmp_path):
    estimator = _trained(_two_dense("adam"), tmp_path, checkpoint_format=None)
    assert _keys(estimator.latest_checkpoint()) == REFERENCE["adam"]["keys"]


def test_by_default_a_model_dir_of_object_checkpoints_stays_object_based(tmp_path):
    _trained(_two_dense("adam"), tmp_path)
    estimator = _trained(_two_dense("adam"), tmp_path, checkpoint_format=None)
    assert "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE" in estimator.get_variable_names()
    assert estimator.evaluate(_input_fn("dense_input"), steps=1)["global_step"] == 4


def test_by_default_a_model_dir_of_name_based_checkpoints_stays_name_based(tmp_path):
    _trained(_two_dense("adam"), tmp_path, checkpoint_format="saver")
    estimator = _trained(_two_dense("adam"), tmp_path, checkpoint_format=None)
    assert "dense/kernel" in estimator.get_variable_names()
    assert estimator.evaluate(_input_fn("dense_input"), steps=1)["global_step"] == 4


def test_a_name_based_model_dir_resumes_into_object_based_checkpoints_when_asked(tmp_path):
    name_based = _trained(_two_dense("adam"), tmp_path, checkpoint_format="saver")
    before = name_based.evaluate(_input_fn("dense_input"), steps=1)["loss"]
    estimator = model_to_estimator(keras_model=_two_dense("adam"), model_dir=str(tmp_path),
                                   checkpoint_format="checkpoint")
    assert estimator.evaluate(_input_fn("dense_input"), steps=1)["loss"] == pytest.approx(before, rel=1e-6)
    estimator.train(_input_fn("dense_input"), steps=1)
    assert "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE" in estimator.get_variable_names()
    assert estimator.evaluate(_input_fn("dense_input"), steps=1)["global_step"] == 3


class _Subclassed(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = L.Dense(1)

    def call(self, inputs):
        return self.dense(inputs)


def test_subclassed_models_are_refused_object_based_checkpoints_as_in_2_15():
    model = _Subclassed()
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="Object-based checkpoints are currently not supported with subclassed"):
        model_to_estimator(keras_model=model, checkpoint_format="checkpoint")


def test_subclassed_models_save_name_based_checkpoints_by_default_where_2_15_refused_them(tmp_path):
    # 2.15's default refused them (REFERENCE["subclassed_default_error"]); tf.compat.v1's default, 'saver', is kept
    model = _Subclassed()
    model.compile("sgd", "mse")
    estimator = model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    assert estimator._checkpointer.object_keys is None


def test_an_unknown_format_is_refused_with_2_15s_message():
    with pytest.raises(ValueError, match='Checkpoint format must be one of "checkpoint" or "saver". Got object'):
        model_to_estimator(keras_model=_two_dense("sgd"), checkpoint_format="object")


def test_an_object_based_save_of_non_finite_values_is_refused_and_publishes_nothing(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    kernel = tf.Variable([[np.nan]], name="dense/kernel")
    checkpointer.object_keys = object_keys.ObjectKeys()
    checkpointer.object_keys.record([(kernel, "layer_with_weights-0/kernel")])
    with pytest.raises(finite.NonFiniteCheckpointError):
        checkpointer.save({"global_step": tf.Variable(1, dtype=tf.int64), "dense/kernel": kernel}, 1)
    assert checkpointer.latest() is None and not os.listdir(tmp_path)


def test_an_object_based_save_is_verified_and_published_in_the_state_file(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    kernel = tf.Variable([[2.0]], name="dense/kernel")
    checkpointer.object_keys = object_keys.ObjectKeys()
    checkpointer.object_keys.record([(kernel, "layer_with_weights-0/kernel")])
    path = checkpointer.save({"global_step": tf.Variable(7, dtype=tf.int64), "dense/kernel": kernel}, 7)
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    assert checkpointer.global_step(path) == 7
    restored = tf.Variable([[0.0]])
    checkpointer.restore(path, {"dense/kernel": restored})
    assert restored.numpy()[0, 0] == 2.0


class _SessionHook(tf.compat.v1.train.SessionRunHook):
    """Any tf.compat.v1 session hook: model_fn then runs on the graph path."""


def test_on_the_graph_path_a_tf_compat_v1_optimizer_is_saved_as_2_15_saved_it(tmp_path):
    tf_keras = pytest.importorskip("tf_keras")
    model = tf_keras.Sequential([tf_keras.layers.Dense(2, input_shape=(3,), name="dense", kernel_initializer="ones"),
                                 tf_keras.layers.Dense(1, name="out", kernel_initializer="ones")])
    model.compile(tf.compat.v1.train.RMSPropOptimizer(1e-3), "mse")
    estimator = model_to_estimator(keras_model=model, model_dir=str(tmp_path), checkpoint_format="checkpoint")
    estimator.train(_input_fn("dense_input"), steps=2, hooks=[_SessionHook()])
    assert _keys(estimator.latest_checkpoint()) == REFERENCE["tf_rmsprop"]["keys"]
    result = estimator.evaluate(_input_fn("dense_input"), steps=1, hooks=[_SessionHook()])
    assert result["loss"] == pytest.approx(REFERENCE["tf_rmsprop"]["loss"], rel=1e-5)
    estimator.train(_input_fn("dense_input"), steps=1)  # the TF2 path resumes from the graph path's checkpoint
    assert estimator.evaluate(_input_fn("dense_input"), steps=1)["global_step"] == 3

