"""The tf.estimator 2.15 fixtures in tests/fixtures/tf215 are intact and match their reference.json.

Checks the files only (readable checkpoints, recorded names, shapes and steps); nothing here runs the engine.
"""

import importlib.util
import json
import os

import numpy as np
import pytest
import tensorflow as tf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "tf215")
with open(os.path.join(FIXTURES, "reference.json")) as _f:
    REFERENCE = json.load(_f)
MODELS = sorted(REFERENCE["models"])
ABSOLUTE = REFERENCE["absolute_paths"]
ABSOLUTE_NAME = "a_keras_sequential_adam_absolute_paths"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"tf215_{name}", os.path.join(FIXTURES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _model_dir(name: str) -> str:
    return os.path.join(FIXTURES, name, "model_dir")


def test_reference_was_made_by_tensorflow_estimator_2_15():
    assert REFERENCE["versions"]["tensorflow"].startswith("2.15.")
    assert REFERENCE["versions"]["tensorflow-estimator"].startswith("2.15.")


@pytest.mark.parametrize("name", MODELS)
def test_model_dir_holds_the_recorded_files_and_state_file(name):
    ref = REFERENCE["models"][name]
    assert sorted(os.listdir(_model_dir(name))) == ref["files"]
    with open(os.path.join(_model_dir(name), "checkpoint")) as f:
        assert f.read() == ref["checkpoint_state_text"]


@pytest.mark.parametrize("name", MODELS)
def test_latest_checkpoint_is_step_20_with_the_recorded_names_and_shapes(name):
    latest = tf.train.latest_checkpoint(_model_dir(name))
    assert os.path.basename(latest) == "model.ckpt-20"
    recorded = [(variable, shape) for variable, shape, _ in REFERENCE["models"][name]["variables_at_20"]]
    assert tf.train.list_variables(latest) == recorded
    assert tf.train.load_variable(latest, "global_step") == 20


@pytest.mark.parametrize("name", MODELS)
def test_step_10_checkpoint_is_kept_and_readable(name):
    path = os.path.join(_model_dir(name), "model.ckpt-10")
    assert tf.train.load_variable(path, "global_step") == 10
    assert [v for v, _ in tf.train.list_variables(path)] == [v for v, _, _ in
                                                             REFERENCE["models"][name]["variables_at_20"]]


@pytest.mark.parametrize("name", MODELS)
def test_reference_npz_step20_values_are_the_checkpoint_values(name):
    latest = os.path.join(_model_dir(name), "model.ckpt-20")
    arrays = np.load(os.path.join(FIXTURES, "reference.npz"))
    for variable, _, dtype in REFERENCE["models"][name]["variables_at_20"]:
        value = arrays[f"{name}/step20/{variable}"]
        assert value.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(value, tf.train.load_variable(latest, variable))


def test_absolute_paths_variant_names_another_machines_model_dir():
    model_dir = _model_dir(ABSOLUTE_NAME)
    with open(os.path.join(model_dir, "checkpoint")) as f:
        state = f.read()
    assert state == ABSOLUTE["checkpoint_state_text"]
    assert f'model_checkpoint_path: "{ABSOLUTE["foreign_model_dir"]}/model.ckpt-20"' in state
    assert not os.path.exists(ABSOLUTE["foreign_model_dir"])
    assert tf.train.latest_checkpoint(model_dir) is None  # as in 2.15: the state file's paths do not resolve here


def test_absolute_paths_variant_holds_the_same_checkpoints_as_its_source():
    source = _model_dir(ABSOLUTE["copy_of"])
    for name in ABSOLUTE["files"]:
        if name != "checkpoint":
            with open(os.path.join(source, name), "rb") as a, open(os.path.join(_model_dir(ABSOLUTE_NAME), name),
                                                                  "rb") as b:
                assert a.read() == b.read(), name


def test_data_npz_is_what_the_input_fns_generate():
    (train_x, train_y), (eval_x, eval_y) = _module("models_tf215").make_data()
    data = np.load(os.path.join(FIXTURES, "data.npz"))
    for key, value in {"train_x": train_x, "train_y": train_y, "eval_x": eval_x, "eval_y": eval_y,
                       "predict_x": eval_x[:REFERENCE["data"]["num_predict"]]}.items():
        assert data[key].dtype == value.dtype
        np.testing.assert_array_equal(data[key], value, err_msg=key)


def test_models_ported_and_models_diff_are_current():
    port_models = _module("port_models")
    with open(os.path.join(FIXTURES, "models_tf215.py")) as f:
        original = f.read()
    with open(os.path.join(FIXTURES, "models_ported.py")) as f:
        assert f.read() == port_models.port(original), "run tests/fixtures/tf215/port_models.py"
    with open(os.path.join(FIXTURES, "models.diff")) as f:
        assert f.read() == port_models.unified_diff(original, port_models.port(original))
