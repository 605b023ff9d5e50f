"""Issue 17.6: Ctrl-C or SIGTERM during an evaluation stops it at the next batch and the process exits as for a
signal during training; a second Ctrl-C ends the process at once, even while a step runs.

Every run is a tests/eval_signal_worker.py process whose evaluation would take minutes (400 batches, each
made by a py_function that reports it and sleeps). The signal goes once the input pipeline has made the
evaluation's second batch (the first one has been read), so nothing depends on timing.
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest
import tensorflow as tf

from tests import launcher
from tests.worker_process import ROOT, START_TIMEOUT_S, env

EVAL_BATCHES = 400  # tests/eval_signal_worker.py's evaluation
STOPPED_WITHIN = 40  # batches made by the time the evaluation stopped: the signal's batch, the pipeline's read-ahead


class EvalWorker:
    """One eval_signal_worker process and the JSON events it prints, as they come."""

    def __init__(self, model_dir, call: str, path: str, *args: str):
        command = [sys.executable, "-m", "tests.eval_signal_worker", str(model_dir), call, path, *args]
        self.process = launcher.popen(command, cwd=ROOT, env=env(), stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        self.events: list[dict] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            if line.startswith("{"):
                self._queue.put(json.loads(line))
        self._queue.put(None)

    def _drain(self, timeout: float) -> bool:
        """Moves the events that came (waiting up to `timeout` for one) to self.events; False once output ended."""
        try:
            event = self._queue.get(timeout=timeout)
        except queue.Empty:
            return True
        while event is not None:
            self.events.append(event)
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                return True
        return False

    def wait_for_batch(self, index: int) -> None:
        """Waits until the evaluation's input pipeline has made batch `index`."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not any(e["event"] == "eval_batch" and e["index"] >= index for e in self.events):
            assert time.monotonic() < deadline, f"no evaluation batch {index}; events: {self.events[-5:]}"
            assert self._drain(0.5), f"the worker ended first; events: {self.events[-5:]}"

    def wait(self) -> int:
        code = self.process.wait(timeout=START_TIMEOUT_S)
        while self._drain(5.0):
            pass
        return code

    def last(self, name: str) -> dict | None:
        return next((e for e in reversed(self.events) if e["event"] == name), None)

    def batches_made(self) -> int:
        return 1 + max((e["index"] for e in self.events if e["event"] == "eval_batch"), default=-1)


@pytest.fixture
def start():
    """Starts EvalWorkers; any still running when the test ends (a failed one) is killed."""
    started: list[EvalWorker] = []

    def make(*args: str) -> EvalWorker:
        started.append(EvalWorker(*args))
        return started[-1]

    yield make
    for worker in started:
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()


def _stop_during_evaluation(start, tmp_path, call: str, path: str, signum: int) -> tuple[EvalWorker, int]:
    worker = start(tmp_path / "run", call, path)
    worker.wait_for_batch(1)
    worker.process.send_signal(signum)
    return worker, worker.wait()


@pytest.mark.parametrize("path", ["tf2", "graph"])
def test_ctrl_c_during_train_and_evaluates_evaluation_stops_it_and_exits_as_during_training(start, tmp_path, path):
    worker, code = _stop_during_evaluation(start, tmp_path, "train_and_evaluate", path, signal.SIGINT)
    model_dir = tmp_path / "run"
    checkpoint = str(model_dir / "model.ckpt-4")
    assert code == 128 + signal.SIGINT, worker.events[-5:]
    assert worker.last("interrupted") == {
        "event": "interrupted", "step": 4, "checkpoint": checkpoint, "kind": "TrainingInterrupted",
        "message": f"Training stopped by SIGINT at global step 4; checkpoint {checkpoint}. Run the same training "
                   "again (same model_dir) to resume from there."}
    assert worker.batches_made() < STOPPED_WITHIN  # of EVAL_BATCHES: stopped at the next batch, not at the end
    assert tf.train.latest_checkpoint(str(model_dir)) == checkpoint
    assert not os.path.exists(model_dir / "eval")  # no evaluation results, nor half of them


@pytest.mark.parametrize("path", ["tf2", "graph"])
def test_sigterm_during_evaluate_stops_at_the_next_batch_writes_nothing_and_exits_143(start, tmp_path, path):
    worker, code = _stop_during_evaluation(start, tmp_path, "evaluate", path, signal.SIGTERM)
    model_dir = tmp_path / "run"
    checkpoint = str(model_dir / "model.ckpt-4")
    assert code == 128 + signal.SIGTERM, worker.events[-5:]
    stopped = worker.last("interrupted")
    assert stopped is not None and stopped["kind"] == "EvaluationInterrupted", worker.events[-5:]
    assert stopped["step"] == 4 and stopped["checkpoint"] == checkpoint
    assert stopped["message"].startswith("Evaluation stopped by SIGTERM after ")
    assert stopped["message"].endswith(f" batches (global step 4; checkpoint {checkpoint}); no results were "
                                       "written. Run the evaluation again to evaluate that checkpoint.")
    assert worker.batches_made() < STOPPED_WITHIN
    assert not os.path.exists(model_dir / "eval")


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (Linux: the SigCgt mask in /proc/<pid>/status)."""
    with open(f"/proc/{pid}/status") as f:
        caught = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    return bool(caught >> (signum - 1) & 1)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads signal dispositions from /proc (Linux)")
def test_a_second_ctrl_c_during_a_long_evaluation_step_ends_the_process_at_once(start, tmp_path):
    """Batch 3 takes 300 s to make: the main thread waits inside TensorFlow, where Python runs no handler."""
    worker = start(tmp_path / "run", "train_and_evaluate", "tf2", "--long_batch=2")
    worker.wait_for_batch(2)
    time.sleep(2)  # batch 2 read, the main thread is waiting for batch 3 (on time or not, the outcome is the same)
    pid = worker.process.pid
    assert _catches(pid, signal.SIGINT)
    worker.process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 60
    while _catches(pid, signal.SIGINT):  # the first Ctrl-C was seen once its handler is gone
        assert time.monotonic() < deadline, "the first Ctrl-C was not seen while the step ran"
        time.sleep(0.05)
    second = time.monotonic()
    worker.process.send_signal(signal.SIGINT)
    assert worker.wait() == -signal.SIGINT  # ended by the signal itself
    assert time.monotonic() - second < 60  # not at the end of the 300 s step
    assert worker.last("interrupted") is None
    assert tf.train.latest_checkpoint(str(tmp_path / "run")) == str(tmp_path / "run" / "model.ckpt-4")
