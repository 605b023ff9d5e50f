"""Issue 8.3: Estimator(warm_start_from=...) as tf.estimator 2.15: a path, or WarmStartSettings with
vars_to_warm_start (a regex over trainable variables, or a list of regexes over all) and var_name_to_prev_var_name,
from one of our checkpoints and from a tf.estimator 2.15 model_dir.

What a warm-started model starts with is read after one training step that changes nothing: learning rate 0 and
BatchNormalization momentum 1 (moving statistics kept), so every variable still holds its initial value.
"""

import importlib.util
import os
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, Estimator, EstimatorSpec, ModeKeys
from estimators.checkpoint.warm_start import WarmStartSettings
from tests import engine_models as m

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tf215")


def _model_fn(features, labels, mode, params):
    names = params.get("names", {})
    hidden = keras.layers.Dense(8, activation="relu", name=names.get("hidden"),
                                kernel_initializer=keras.initializers.GlorotUniform(seed=1))
    norm = keras.layers.BatchNormalization(momentum=params["bn_momentum"], name=names.get("norm"))
    out = keras.layers.Dense(m.CLASSES, name=names.get("out"),
                             kernel_initializer=keras.initializers.GlorotUniform(seed=2))
    logits = out(norm(hidden(features), training=mode == ModeKeys.TRAIN))
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    optimizer = CrossShardOptimizer(keras.optimizers.SGD(params["lr"], momentum=0.9))
    return EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss) if mode == ModeKeys.TRAIN else None)


def _input_fn():
    x, y = m.dataset(64)
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16, drop_remainder=True)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A model_dir trained 6 steps (weights, BN moving statistics and momentum slots all away from their init)."""
    model_dir = str(tmp_path_factory.mktemp("source"))
    Estimator(_model_fn, model_dir=model_dir, params={"lr": 0.1, "bn_momentum": 0.5}).train(_input_fn, max_steps=6)
    return model_dir


def _initial_values(model_dir, warm_start_from=None, names=None) -> dict:
    """Every variable of a model warm-started from `warm_start_from`, as it started (see the module docstring)."""
    params = {"lr": 0.0, "bn_momentum": 1.0, "names": names or {}}
    estimator = Estimator(_model_fn, model_dir=str(model_dir), params=params, warm_start_from=warm_start_from)
    estimator.train(_input_fn, max_steps=1)
    return {name: estimator.get_variable_value(name) for name in estimator.get_variable_names()}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    return _initial_values(tmp_path_factory.mktemp("fresh"))


def _from(path: str, name: str) -> np.ndarray:
    return tf.train.load_variable(tf.train.latest_checkpoint(path) if os.path.isdir(path) else path, name)


def _assert_started_as(values: dict, warm: list[str], source: str, fresh: dict, renamed: dict | None = None) -> None:
    """`warm` variables hold the source's values (under renamed[name] there), every other one its fresh init."""
    for name, value in values.items():
        if name in ("global_step", "estimators/input_position", "sgd/iteration"):
            continue
        expected = _from(source, (renamed or {}).get(name, name)) if name in warm else fresh[name]
        np.testing.assert_array_equal(value, expected, err_msg=name)


TRAINABLE = ["dense/kernel", "dense/bias", "batch_normalization/gamma", "batch_normalization/beta",
             "dense_1/kernel", "dense_1/bias"]


def test_warm_start_from_a_path_copies_the_trainable_variables_only(tmp_path, source, fresh):
    values = _initial_values(tmp_path, warm_start_from=source)
    assert values["global_step"] == 1
    # Not BN moving statistics, optimizer slots or the global step: 2.15's default vars_to_warm_start=".*".
    _assert_started_as(values, TRAINABLE, source, fresh)


def test_vars_to_warm_start_regex_picks_the_matching_trainable_variables(tmp_path, source, fresh):
    values = _initial_values(tmp_path, WarmStartSettings(source, vars_to_warm_start="dense_1/.*"))
    _assert_started_as(values, ["dense_1/kernel", "dense_1/bias"], source, fresh)


def test_vars_to_warm_start_list_reaches_non_trainable_variables_and_slots(tmp_path, source, fresh):
    wanted = ["batch_normalization/moving_mean", "dense/kernel:0", "dense_1/bias/Momentum"]
    values = _initial_values(tmp_path, WarmStartSettings(source, vars_to_warm_start=wanted))
    slot = _from(source, "dense_1/bias/Momentum")
    # The warm-started momentum moves its variable even at learning rate 0 (m <- 0.9 m - 0 g; bias <- bias + m).
    np.testing.assert_allclose(values.pop("dense_1/bias/Momentum"), 0.9 * slot, rtol=1e-6)
    np.testing.assert_allclose(values.pop("dense_1/bias"), fresh["dense_1/bias"] + 0.9 * slot, rtol=1e-6, atol=1e-7)
    assert np.abs(slot).max() > 1e-3
    _assert_started_as(values, ["batch_normalization/moving_mean", "dense/kernel"], source, fresh)


def test_warm_start_from_a_checkpoint_prefix_uses_that_checkpoint(tmp_path, source, fresh):
    earlier = os.path.join(tmp_path, "copy")
    shutil.copytree(source, earlier)
    Estimator(_model_fn, model_dir=earlier, params={"lr": 0.1, "bn_momentum": 0.5}).train(_input_fn, max_steps=9)
    prefix = os.path.join(earlier, "model.ckpt-6")
    assert tf.train.latest_checkpoint(earlier).endswith("model.ckpt-9")
    values = _initial_values(tmp_path / "warm", WarmStartSettings(prefix))
    _assert_started_as(values, TRAINABLE, prefix, fresh)


def test_var_name_to_prev_var_name_maps_renamed_layers(tmp_path, source):
    names = {"hidden": "encoder", "norm": "norm", "out": "head"}
    renamed = {"encoder/kernel": "dense/kernel", "encoder/bias": "dense/bias", "head/kernel": "dense_1/kernel",
               "head/bias": "dense_1/bias"}
    fresh_renamed = _initial_values(tmp_path / "fresh", names=names)
    settings = WarmStartSettings(source, vars_to_warm_start="(encoder|head)/", var_name_to_prev_var_name=renamed)
    values = _initial_values(tmp_path / "warm", settings, names=names)
    _assert_started_as(values, list(renamed), source, fresh_renamed, renamed)


# -- from a model_dir tf.estimator 2.15 wrote -------------------------------------------------------------------

_spec = importlib.util.spec_from_file_location("tf215_models_ported", os.path.join(FIXTURES, "models_ported.py"))
ported = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ported)


def _fixture_initial_values(model_dir, warm_start_from=None) -> dict:
    """Fixture c's Keras functional model warm-started, as it started (Adagrad at learning rate 0)."""
    estimator = Estimator(ported.keras_functional_adagrad_model_fn, model_dir=str(model_dir),
                          params={"learning_rate": 0.0}, warm_start_from=warm_start_from)
    estimator.train(ported.train_input_fn, max_steps=1)
    return {name: estimator.get_variable_value(name) for name in ["hidden/kernel", "hidden/bias", "logits/kernel"]}


@pytest.mark.parametrize("checkpoint", ["model_dir", "model.ckpt-10"])
def test_warm_start_from_a_2_15_model_dir_with_a_regex(tmp_path, checkpoint):
    model_dir = str(tmp_path / "c")
    shutil.copytree(os.path.join(FIXTURES, "c_keras_functional_adagrad", "model_dir"), model_dir)
    path = model_dir if checkpoint == "model_dir" else os.path.join(model_dir, checkpoint)
    values = _fixture_initial_values(tmp_path / "warm", WarmStartSettings(path, vars_to_warm_start="hidden/"))
    fresh = _fixture_initial_values(tmp_path / "fresh")
    np.testing.assert_array_equal(values["hidden/kernel"], _from(path, "hidden/kernel"))
    np.testing.assert_array_equal(values["hidden/bias"], _from(path, "hidden/bias"))
    np.testing.assert_array_equal(values["logits/kernel"], fresh["logits/kernel"])
    assert not np.array_equal(values["hidden/kernel"], fresh["hidden/kernel"])
