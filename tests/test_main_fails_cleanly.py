"""main.py runs that must fail before doing anything, and say so in one clean line (issue 17 item 10).

- Bad data files fail the run before anything is written: model_dir is left as it was (not even an events file).
- A flagfile that includes itself is a command-line error (exit 2), not a warning followed by main.py's default job.
- Errors raised from inside TensorFlow ops carry no `{{function_node __wrapped__...}}` prefix.
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

from launch import console
from tests import launcher
from tests.gcs_emulator import GcsEmulator, unavailable_reason
from tests.gcs_faults import insert_relay

ROOT = Path(__file__).resolve().parents[1]
TINY = ("--train_batch_size=8", "--eval_batch_size=10", "--predict_batch_size=10", "--iterations_per_loop=2",
        "--train_steps=2", "--save_checkpoints_steps=2")
NOISE = "{{function_node"


def _idx_split(folder: Path, prefix: str, *, truncated: bool = False) -> None:
    """Fashion-MNIST files of 10 images; `truncated` cuts the images file in half."""
    folder.mkdir(parents=True, exist_ok=True)
    images = struct.pack(">iiii", 2051, 10, 28, 28) + bytes(10 * 28 * 28)
    (folder / f"{prefix}-images-idx3-ubyte.gz").write_bytes(
        gzip.compress(images[: len(images) // 2] if truncated else images))
    (folder / f"{prefix}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(struct.pack(">ii", 2049, 10) + bytes(10)))


def _main(*argv: str, env: dict | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    environ = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", **(env or {}))
    return launcher.run([sys.executable, str(ROOT / "main.py"), *argv], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=600)


def _error_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("error: ")]


# -- bad data files: nothing written -----------------------------------------------------------------
def _fails_on_bad_data_writing_nothing(tmp_path, mode: str, bad_file: str) -> None:
    """main.py --mode=`mode` exits 1 naming `bad_file` as truncated, and model_dir was never created."""
    model_dir = tmp_path / "md"
    done = _main(f"--mode={mode}", "--dataset=fashion_mnist", f"--data_dir={tmp_path / 'data'}",
                 f"--model_dir={model_dir}", *TINY)
    assert done.returncode == 1, done.stderr[-3000:]
    assert f"{bad_file}: file truncated" in _error_lines(done)[0]
    assert not model_dir.exists(), f"a failing run wrote {sorted(p.name for p in model_dir.rglob('*'))}"


def test_training_on_a_truncated_train_file_fails_before_model_dir_is_created(tmp_path):
    _idx_split(tmp_path / "data", "train", truncated=True)
    _fails_on_bad_data_writing_nothing(tmp_path, "train", "train-images-idx3-ubyte.gz")


def test_train_and_evaluate_with_a_bad_test_file_fails_before_training(tmp_path):
    _idx_split(tmp_path / "data", "train")
    _idx_split(tmp_path / "data", "t10k", truncated=True)
    _fails_on_bad_data_writing_nothing(tmp_path, "train_and_evaluate", "t10k-images-idx3-ubyte.gz")


# -- flagfiles that include themselves ---------------------------------------------------------------
def test_a_flagfile_that_includes_itself_is_a_usage_error_and_nothing_runs(tmp_path):
    flagfile = tmp_path / "flags.txt"
    model_dir = tmp_path / "md"
    flagfile.write_text("\n".join([f"--flagfile={flagfile}", f"--model_dir={model_dir}", "--dataset=synthetic",
                                   *TINY]) + "\n")
    done = _main(f"--flagfile={flagfile}")
    assert done.returncode == 2, done.stderr[-3000:]
    assert _error_lines(done) == [f"error: flagfile {flagfile} includes itself ({flagfile} -> {flagfile}): remove "
                                  f"the --flagfile={flagfile} line from {flagfile}."]
    assert "Traceback" not in done.stderr and not model_dir.exists()


def test_a_flagfile_cycle_through_another_file_is_found_whatever_the_spelling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("--mode=evaluate\n--flagfile=b.txt\n")
    (tmp_path / "b.txt").write_text("# comment\n--flagfile=./a.txt\n")
    assert console.flagfile_cycle(["main.py", "--flagfile=a.txt"]) == ["a.txt", "b.txt", "./a.txt"]


def test_a_flagfile_included_twice_without_a_cycle_is_allowed(tmp_path):
    common = tmp_path / "common.txt"
    common.write_text("--seed=1\n")
    (tmp_path / "a.txt").write_text(f"--flagfile={common}\n--flagfile={common}\n")
    assert console.flagfile_cycle(["main.py", f"--flagfile={tmp_path / 'a.txt'}", f"--flagfile={common}"]) is None


# -- TensorFlow's function_node noise ----------------------------------------------------------------
def test_an_op_error_line_drops_the_function_node_prefix():
    err = tf.errors.UnavailableError(None, None, "{{function_node __wrapped__SaveV2_dtypes_4_device_/job:localhost/"
                                                 "replica:0/task:0/device:CPU:0}} HTTP response code 503")
    assert console.error_line(err) == "error: HTTP response code 503 (--verbosity=1 shows where)"


def test_an_error_wrapping_an_op_error_loses_the_prefix_too():
    err = RuntimeError("Could not publish the export gs://b/export/1: {{function_node __wrapped__SaveV2_dtypes_4_"
                       "device_/job:localhost/replica:0/task:0/device:CPU:0}} All 1 retry attempts failed.")
    expected = "error: Could not publish the export gs://b/export/1: All 1 retry attempts failed."
    assert console.error_line(err) == expected


@pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")
def test_a_gs_export_failing_inside_tensorflow_says_why_without_function_node_noise(tmp_path):
    """503 answers to the upload of the export's variables: SaveV2 fails inside a tf.function."""
    model_dir = tmp_path / "md"
    trained = _main("--mode=train", "--dataset=synthetic", f"--model_dir={model_dir}", *TINY)
    assert trained.returncode == 0, trained.stderr[-3000:]
    with GcsEmulator("export-noise") as gcs:
        relay = insert_relay(gcs, {"variables_temp": "error"})
        try:
            done = _main("--mode=export", "--dataset=synthetic", f"--model_dir={model_dir}",
                         "--export_dir=gs://export-noise/export", *TINY, env=gcs.env())
            hit = list(relay.failed)
        finally:
            relay.close()
    assert hit, "the fault was never hit"
    assert done.returncode == 1, done.stderr[-3000:]
    errors = _error_lines(done)
    assert errors and "503" in " ".join(errors), done.stderr[-3000:]
    assert NOISE not in " ".join(errors), json.dumps(errors)


_API_EXPORT = r'''
import sys
import tensorflow as tf
from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.export import build_raw_serving_input_receiver_fn
from tests import engine_models as m

model_dir, export_base = sys.argv[1:3]
config = RunConfig(model_dir=model_dir, save_checkpoints_steps=2, tpu_config=TPUConfig(2))
est = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=16, predict_batch_size=16)
x, y = m.dataset(64)
est.train(m.train_input_fn(x, y), max_steps=2)
try:
    est.export_saved_model(export_base, build_raw_serving_input_receiver_fn(tf.TensorSpec([None, m.FEATURES])))
except Exception as err:
    print("ERROR " + (getattr(err, "message", None) or str(err)).replace("\n", " "), flush=True)
'''


@pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")
def test_the_python_api_export_error_from_a_gs_fault_carries_no_function_node_noise(tmp_path):
    with GcsEmulator("export-noise-api") as gcs:
        relay = insert_relay(gcs, {"variables_temp": "error"})
        try:
            env = dict(os.environ, **gcs.env(), PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3")
            done = launcher.run([sys.executable, "-c", _API_EXPORT, str(tmp_path / "md"),
                                   "gs://export-noise-api/export"], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=600)
        finally:
            relay.close()
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR ")]
    assert errors and "503" in errors[0], done.stderr[-3000:]
    assert NOISE not in errors[0], errors[0]
