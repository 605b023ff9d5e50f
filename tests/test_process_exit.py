"""Issue 17.5: a process ends within seconds of its last engine call, on one replica and on 8.

Every case is a tests/exit_worker.py process: it trains a few steps, makes its last call (train,
evaluate or predict) and prints `LAST <call>`. What is timed is the wait between that line and the
process's end. A bare `import tensorflow` process takes a few seconds to end on a busy machine (the
interpreter's teardown of TensorFlow); the bound here only tells that from a hang (a finished process
once waited ~343 s for a thread freeing an 8-device iterator), so it is generous.
"""

import os
import subprocess
import sys
import time

import pytest

from tests.worker_process import ROOT, START_TIMEOUT_S, env

HANG_S = 60  # "ended promptly" is well under this; the hangs were 75-343 s


def _seconds_to_exit(model_dir, *args: str, alive: list | None = None) -> float:
    """Runs tests.exit_worker with `args`; the seconds between its `LAST` line and its end (exit status 0).
    `alive` gets the `ALIVE` counts the worker printed."""
    command = [sys.executable, "-m", "tests.exit_worker", str(model_dir / "run"), *args]
    return _seconds_after("LAST ", command, model_dir, ROOT, env(), alive)


def _seconds_after(marker: str, command: list, model_dir, cwd, environment: dict, alive: list | None = None) -> float:
    """The seconds between the process's line starting with `marker` and its end (exit status 0)."""
    with open(os.path.join(model_dir, "stderr"), "w+") as stderr:
        process = subprocess.Popen(command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            last = None
            for line in process.stdout:
                if line.startswith(marker):
                    last = time.monotonic()
                elif line.startswith("ALIVE ") and alive is not None:
                    alive.append(int(line.split()[1]))
            code = process.wait(timeout=START_TIMEOUT_S)
        finally:
            if process.poll() is None:
                process.kill()
        ended = time.monotonic()
        stderr.seek(0)
        assert code == 0 and last is not None, stderr.read()[-3000:]
    return ended - last


@pytest.mark.parametrize("replicas", [1, 8])
@pytest.mark.parametrize("call", ["train", "evaluate", "predict"])
def test_the_process_ends_promptly_after_its_last_call(tmp_path, call, replicas):
    assert _seconds_to_exit(tmp_path, call, str(replicas)) < HANG_S


@pytest.mark.parametrize("call", ["evaluate", "predict"])
def test_the_process_ends_promptly_after_its_last_call_on_the_graph_path_on_8_replicas(tmp_path, call):
    assert _seconds_to_exit(tmp_path, call, "8", "graph") < HANG_S


@pytest.fixture
def busy_machine():
    """Two CPU burners beside the test (this machine has two cores), for as long as it runs."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for burner in burners:
        burner.kill()
        burner.wait()


@pytest.mark.parametrize("replicas", [1, 8])
def test_a_notebook_that_reads_a_few_predictions_ends_promptly_on_a_busy_machine(tmp_path, replicas, busy_machine):
    # The Colab mnist notebook's end: predict() over the test set, a few predictions printed, the program done.
    alive = []
    assert _seconds_to_exit(tmp_path, "predict_some", str(replicas), alive=alive) < HANG_S
    assert alive == [0]  # the abandoned prediction's iterator is not being freed in a thread exit must wait for


@pytest.mark.needs_tf_keras
def test_the_colab_mnist_tpuestimator_program_ends_promptly_after_its_result_on_a_busy_machine(tmp_path, busy_machine):
    """tests/compat's re-creation of the notebook, as a user runs it: TPUEstimator train, evaluate, export, two
    predict() generators left unfinished, its result printed; then the interpreter's end (2.15: at once)."""
    programs = os.path.join(ROOT, "tests", "compat", "programs")
    environment = dict(env(), TF_USE_LEGACY_KERAS="1")
    command = [sys.executable, os.path.join(programs, "mnist_colab.py"), f"--model_dir={tmp_path / 'run'}"]
    assert _seconds_after("COMPAT_RESULT ", command, tmp_path, programs, environment) < HANG_S
