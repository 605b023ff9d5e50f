"""TPU preflight on the CPU: what a TPU would reject, in plain words, through the Python API and main.py.

The broken model_fns are tests/preflight_models.py's model with one line changed each; every
finding must name the problem, the fix, and (for model_fn code) the model_fn line.
"""

import functools
import inspect
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import Estimator, RunConfig, TPUConfig, TPUEstimator
from estimators.preflight import preflight
from tests import launcher
from tests import preflight_models as pm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _estimator(tmp_path, params=None, num_shards=None, **batches):
    sizes = dict(train_batch_size=64, eval_batch_size=64, predict_batch_size=64)
    sizes.update(batches)
    config = RunConfig(model_dir=str(tmp_path / "model"), tpu_config=TPUConfig(num_shards=num_shards))
    return TPUEstimator(pm.model_fn, config=config, params=params or {}, use_tpu=False, **sizes)


def _line_of(text: str) -> str:
    """"tests/preflight_models.py:<n>" of the line of preflight_models.py holding `text`."""
    (number,) = [i for i, line in enumerate(inspect.getsource(pm).splitlines(), start=1) if text in line]
    return f"preflight_models.py:{number}"


def _only_error(report):
    assert not report.ok
    (error,) = report.errors
    return error


def test_a_tpu_ready_model_passes_with_every_step_compiled(tmp_path):
    report = preflight(_estimator(tmp_path), pm.input_fn)
    assert report.ok and not report.findings
    assert [(s.mode, s.status) for s in report.steps] == [("train", "compiles"), ("eval", "compiles"),
                                                          ("infer", "compiles")]
    assert "8 examples per core (train_batch_size=64 / 8 cores): compiles" in str(report)
    assert "TPU preflight passed" in str(report)


def test_an_unknown_train_batch_dimension_names_the_tensors_and_suggests_drop_remainder(tmp_path):
    report = preflight(_estimator(tmp_path), {"train": functools.partial(pm.input_fn, drop_remainder=False)})
    error = _only_error(report)
    assert error.kind == "dynamic shape" and error.modes == ("train",)
    assert "features [?, 4], labels [?] is unknown" in error.message and "drop_remainder=True" in error.message


@pytest.mark.parametrize("breakage, op, line", [
    ("py_function", "EagerPyFunc", "tf.py_function("),
    ("numpy_function", "PyFunc", "tf.numpy_function("),
])
def test_an_op_xla_cannot_compile_is_named_with_its_model_fn_line(tmp_path, breakage, op, line):
    report = preflight(_estimator(tmp_path, {"break": breakage}), pm.input_fn)
    error = _only_error(report)
    assert error.kind == "unsupported op" and error.modes == ("train", "eval", "infer")
    assert f"XLA cannot compile {op} `{op}`" in error.message
    assert _line_of(line) in error.where and line in error.where
    assert [s.status for s in report.steps] == ["does not compile"] * 3


def test_float64_in_model_fn_is_an_error_at_its_line_though_the_cpu_compiles_it(tmp_path):
    error = _only_error(preflight(_estimator(tmp_path, {"break": "float64"}), pm.input_fn))
    assert error.kind == "float64" and "TPUs have no 64-bit floats" in error.message and "tf.float32" in error.message
    assert _line_of("tf.float64") in error.where


def test_strings_in_model_fn_are_an_error_at_their_line(tmp_path):
    error = _only_error(preflight(_estimator(tmp_path, {"break": "string"}), pm.input_fn))
    assert error.kind == "string" and "AsString" in error.message and "input_fn or the host" in error.message
    assert _line_of("tf.strings.as_string") in error.where


def test_a_data_dependent_shape_in_model_fn_is_an_error_at_its_line(tmp_path):
    error = _only_error(preflight(_estimator(tmp_path, {"break": "boolean_mask"}), pm.input_fn))
    assert error.kind == "dynamic shape" and "Where `boolean_mask/Where`" in error.message
    assert "0/1 mask" in error.message and _line_of("tf.boolean_mask") in error.where


def test_a_global_batch_that_does_not_divide_by_the_cores_is_an_error(tmp_path):
    report = preflight(_estimator(tmp_path, train_batch_size=100), {"train": pm.input_fn})
    error = _only_error(report)
    assert error.kind == "batch" and "train_batch_size=100 does not divide by the 8 TPU cores" in error.message
    assert "96 (12 per core)" in error.message and "1024 (128 per core" in error.message


def test_a_per_core_batch_not_a_multiple_of_8_is_a_warning_that_says_what_128_would_give(tmp_path):
    report = preflight(_estimator(tmp_path, eval_batch_size=80), {"eval": pm.input_fn})
    assert report.ok and not report.errors
    (warning,) = report.warnings
    assert "10 examples per core (eval_batch_size=80 / 8 cores) is not a multiple of 8" in warning.message
    assert "pads each core's batch to 16" in warning.message
    assert "128 per core (eval_batch_size=1024)" in warning.message
    assert "TPU preflight passed: nothing a TPU would reject (1 warning)" in str(report)


def test_float64_and_string_input_tensors_are_errors_naming_them(tmp_path):
    def input_fn(params):
        x, y = pm.data()
        features = {"x": x.astype("float64"), "name": np.array(["a"] * len(x))}
        return tf.data.Dataset.from_tensor_slices((features, y)).repeat().batch(params["batch_size"],
                                                                                 drop_remainder=True)

    report = preflight(_estimator(tmp_path), {"train": input_fn})
    messages = [f.message for f in report.errors]
    assert any(m.startswith("features['x'] is float64") for m in messages)
    assert any(m.startswith("features['name'] is a string tensor") for m in messages)


def test_a_bare_optimizer_is_reported_as_the_engine_refuses_it_under_8_cores(tmp_path):
    error = _only_error(preflight(_estimator(tmp_path, {"bare_optimizer": True}), {"train": pm.input_fn}))
    assert error.kind == "model_fn" and "bare SGD under 8 replicas" in error.message


def test_the_core_count_comes_from_tpu_config_num_shards(tmp_path):
    report = preflight(_estimator(tmp_path, num_shards=4), {"train": pm.input_fn})
    assert report.num_cores == 4 and "16 examples per core (train_batch_size=64 / 4 cores)" in str(report)


def test_preflight_needs_no_checkpoint_and_leaves_model_dir_alone(tmp_path):
    model_dir = tmp_path / "model"
    report = preflight(_estimator(tmp_path), pm.input_fn)
    assert report.ok and not model_dir.exists()
    estimator = _estimator(tmp_path)
    estimator.train(pm.input_fn, max_steps=1)
    before = {p.name: p.stat().st_mtime_ns for p in model_dir.iterdir()}
    assert preflight(estimator, pm.input_fn).ok
    assert {p.name: p.stat().st_mtime_ns for p in model_dir.iterdir()} == before


def test_a_seeded_training_after_preflight_starts_from_the_same_weights(tmp_path):
    def trained_kernel(name, check_first):
        keras.utils.set_random_seed(7)
        estimator = TPUEstimator(pm.model_fn, model_dir=str(tmp_path / name), use_tpu=False, train_batch_size=64)
        if check_first:
            assert preflight(estimator, {"train": pm.input_fn}).ok
        estimator.train(pm.input_fn, max_steps=1)
        return estimator.get_variable_value("dense/kernel")

    np.testing.assert_array_equal(trained_kernel("after_preflight", True), trained_kernel("plain", False))


def test_a_plain_estimator_is_refused_with_a_pointer_to_tpu_estimator(tmp_path):
    with pytest.raises(ValueError, match=r"preflight checks TPUEstimator programs.*TPUEstimator\(model_fn"):
        preflight(Estimator(pm.model_fn, model_dir=str(tmp_path)), pm.input_fn)


# -- main.py ------------------------------------------------------------------------------------------------

def _main(*args: str, script: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    command = [sys.executable, "-c", script, *args] if script else [sys.executable, "main.py", *args]
    return launcher.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_main_preflight_of_the_builtin_cnn_exits_0_and_writes_nothing(tmp_path):
    proc = _main("--model=cnn", "--mode=preflight", f"--model_dir={tmp_path / 'cnn'}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for mode in ("train", "evaluate", "predict"):
        assert any(line.startswith(f"  {mode}") and line.endswith(": compiles") for line in proc.stdout.splitlines())
    assert "TPU preflight passed" in proc.stdout and "error:" not in proc.stdout
    assert not (tmp_path / "cnn").exists()


def test_main_preflight_of_resnet_in_bfloat16_exits_0(tmp_path):
    proc = _main("--model=resnet", "--dataset=synthetic", "--mode=preflight", "--precision=bfloat16",
                 f"--model_dir={tmp_path / 'resnet'}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "precision bfloat16" in proc.stdout and "TPU preflight passed" in proc.stdout


BROKEN_MAIN = """
import sys
import model_fns
from tests import preflight_models
model_fns.register("float64_model", "synthetic", {"break": "float64"}, image_shape=(28, 28, 1))(
    preflight_models.image_model_fn)
import main
from absl import app
sys.argv[0] = "main.py"
app.run(main.main)
"""


def test_main_preflight_of_a_broken_model_exits_1_with_the_list(tmp_path):
    proc = _main("--model=float64_model", "--mode=preflight", f"--model_dir={tmp_path / 'broken'}",
                 script=BROKEN_MAIN)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "error: train/evaluate/predict: Cast `Cast" in proc.stdout and "a float64 tensor" in proc.stdout
    assert f"at tests/{_line_of('tf.float64')} in _broken" in proc.stdout
    assert "TPU preflight failed: 1 problem a TPU would reject" in proc.stdout
