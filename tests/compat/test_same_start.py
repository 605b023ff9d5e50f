"""Programs whose outcome is their random draws', trained here from 2.15's starting state: 2.15's numbers exactly.

same_start.py runs a ported program with its shuffles and dropout taken out, from a checkpoint written from
numpy; reference/NAME_same_start.json is the same run of NAME_tf215.py on TF 2.15.1 + tensorflow-estimator
2.15.0. Equal to float32 rounding: each variable's sum within 1e-4 of its norm, its norm and the evaluation's
metrics within 1e-4 relative (the 46 steps agree to ~1e-7 here), the evaluation's global_step exactly.
Where TF 2.15 is installed beside us (TF215_PYTHON, else the README's .venv215, else /work/venv215), its run is
made on this machine, as ours is; else the stored one (made on the CPU it names; another CPU kind may round
differently: Eigen sizes its matrix blocks from the CPU's cache sizes). A mismatch names both CPUs.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import numpy as np
import pytest

from tests import launcher

HERE = pathlib.Path(__file__).resolve().parent
RESULT_PREFIX = "COMPAT_RESULT "
NAMES = ["mnist_colab"]


def tf215_python() -> str | None:
    """TF 2.15's interpreter: TF215_PYTHON, else the README's .venv215 in this checkout, else /work/venv215."""
    candidates = [os.environ.get("TF215_PYTHON"), str(HERE.parents[1] / ".venv215" / "bin" / "python"),
                  "/work/venv215/bin/python"]
    return next((c for c in candidates if c and os.path.exists(c)), None)


def run_same_start(name: str, model_dir: pathlib.Path, python: str = sys.executable) -> dict:
    # oneDNN off in the environment, not only in same_start.py: a child forked from the launcher's warm zygote has
    # TensorFlow imported already (with oneDNN on, CI's ours rounded to accuracy 0.4450 where 2.15 gave 0.4455)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", TF_ENABLE_ONEDNN_OPTS="0")
    if python == sys.executable:  # ours: this checkout, with tf_keras as the program's tf.keras
        env.update(PYTHONPATH=str(HERE.parents[1]), TF_USE_LEGACY_KERAS="1")
    else:  # TF 2.15 as it was installed: its own tf.keras, none of our modules
        env.pop("PYTHONPATH", None)
        env.pop("TF_USE_LEGACY_KERAS", None)
    completed = launcher.run([python, str(HERE / "same_start.py"), name, f"--model_dir={model_dir}"],
                             cwd=HERE / "programs", env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in completed.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    assert completed.returncode == 0 and lines, (completed.stdout + completed.stderr)[-5000:]
    return json.loads(lines[-1][len(RESULT_PREFIX):])


@pytest.fixture(scope="module")
def same_start(tmp_path_factory):
    runs: dict[str, dict] = {}

    def get(name: str) -> tuple[dict, dict]:
        if name not in runs:
            ours = run_same_start(name, tmp_path_factory.mktemp(name))
            python = tf215_python()
            if python is not None:
                reference = run_same_start(name, tmp_path_factory.mktemp(f"{name}_215"), python)
                assert reference["tensorflow"].startswith("2.15"), reference["tensorflow"]
            else:
                reference = json.loads((HERE / "reference" / f"{name}_same_start.json").read_text())
                reference["cpu"] += " (stored run: with no TF 2.15 here, another CPU may round differently)"
            runs[name] = ours, reference
        return runs[name]

    return get


@pytest.mark.needs_tf_keras
@pytest.mark.parametrize("name", NAMES)
def test_evaluation_equals_215_from_the_same_start(name, same_start):
    ours, reference = same_start(name)
    assert ours["eval"]["global_step"] == reference["eval"]["global_step"]
    for metric in sorted(set(reference["eval"]) - {"global_step"}):
        np.testing.assert_allclose(ours["eval"][metric], reference["eval"][metric], rtol=1e-4,
                                   err_msg=f"{metric}: ours on {ours['cpu']}, 2.15 on {reference['cpu']}")


@pytest.mark.needs_tf_keras
@pytest.mark.parametrize("name", NAMES)
def test_every_trained_variable_equals_215_from_the_same_start(name, same_start):
    ours, reference = same_start(name)
    ours_variables = {k: v for k, v in ours["variables"].items() if not k.startswith("estimators/")}
    assert sorted(ours_variables) == sorted(reference["variables"])
    for variable, expected in reference["variables"].items():
        got = ours_variables[variable]
        np.testing.assert_allclose(got["norm"], expected["norm"], rtol=1e-4,
                                   err_msg=f"{variable}: ours on {ours['cpu']}, 2.15 on {reference['cpu']}")
        assert abs(got["sum"] - expected["sum"]) <= 1e-4 * expected["norm"] + 1e-7, (variable, got, expected)


def test_refuses_a_tensorflow_imported_with_onednn_on():
    """A warm interpreter imported TensorFlow before same_start.py could turn oneDNN off: it stops and names the fix."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_ENABLE_ONEDNN_OPTS", None)
    code = ("import runpy, sys, tensorflow; sys.argv = ['same_start.py', 'mnist_colab']; "
            f"runpy.run_path({str(HERE / 'same_start.py')!r}, run_name='__main__')")
    done = launcher.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "TF_ENABLE_ONEDNN_OPTS=0 in its environment" in done.stderr, done.stderr[-2000:]
