"""Runs tests/crash_worker.py in a child process and follows the JSON events it prints, as they come."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time

from tests import launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT_S = 240  # a cold start of TensorFlow on a shared 2-core machine; a healthy worker takes ~3 s


def env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")


class Worker:
    """One crash_worker process: its events (dicts, in order) and its end."""

    def __init__(self, model_dir, max_steps: int, *args: str, stderr_path: str | None = None):
        command = [sys.executable, "-m", "tests.crash_worker", str(model_dir), f"--max_steps={max_steps}", *args]
        self._stderr = open(stderr_path or os.devnull, "w")  # noqa: SIM115 - closed in wait()
        self.process = launcher.popen(command, cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=self._stderr,
                                        text=True)
        self.started = time.monotonic()
        self.events: list[dict] = []
        self._queue: queue.Queue = queue.Queue()
        self._ended = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            line = line.strip()
            if line.startswith("{"):
                self._queue.put(json.loads(line))
        self._queue.put(None)

    def _take(self, timeout: float) -> bool:
        """Moves one event (waiting up to `timeout`) to self.events; False when none came."""
        if self._ended:
            return False
        try:
            event = self._queue.get(timeout=timeout)
        except queue.Empty:
            return False
        if event is None:
            self._ended = True
            return False
        self.events.append(event)
        return True

    def wait_for(self, predicate, timeout: float = START_TIMEOUT_S) -> dict | None:
        """The first event so far or to come that satisfies predicate; None if the output ends first."""
        deadline = time.monotonic() + timeout
        index = 0
        while True:
            while index < len(self.events):
                if predicate(self.events[index]):
                    return self.events[index]
                index += 1
            if self._ended:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"worker gave no matching event in {timeout} s; last events: {self.events[-5:]}")
            self._take(min(remaining, 0.5))

    def wait_for_event(self, name: str, timeout: float = START_TIMEOUT_S, **fields) -> dict | None:
        return self.wait_for(lambda e: e["event"] == name and all(e.get(k) == v for k, v in fields.items()),
                             timeout)

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait(self, timeout: float = START_TIMEOUT_S) -> int:
        """Waits for the process to end; returns its exit status (negative: the signal that ended it)."""
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            self._stderr.close()
        while not self._ended:
            self._take(5.0)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.wait()

    def last(self, name: str) -> dict | None:
        while self._take(0.0):
            pass
        return next((e for e in reversed(self.events) if e["event"] == name), None)


def run_to_end(model_dir, max_steps: int, *args: str) -> Worker:
    """Runs a worker to completion; asserts it finished training."""
    worker = Worker(model_dir, max_steps, *args)
    code = worker.wait()
    assert code == 0, f"worker exited with {code}; events: {worker.events[-5:]}"
    assert worker.last("done") == {"event": "done", "step": max_steps}, worker.events[-5:]
    return worker


_REFERENCES: dict = {}


def reference_values(root, max_steps: int, *args: str) -> dict:
    """{name: value} of an uninterrupted worker run to max_steps (made once per session and arguments)."""
    key = (max_steps, args)
    if key not in _REFERENCES:
        model_dir = os.path.join(str(root), f"reference_{len(_REFERENCES)}")
        run_to_end(model_dir, max_steps, *args)
        _REFERENCES[key] = checkpoint_values(model_dir)
    return _REFERENCES[key]


def checkpoint_values(model_dir) -> dict:
    """{name: value} of the newest complete checkpoint in model_dir."""
    import tensorflow as tf

    from estimators.checkpoint.checkpointer import Checkpointer

    reader = tf.train.load_checkpoint(Checkpointer(str(model_dir), None, is_chief=False).latest())
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def assert_bit_exact(actual: dict, expected: dict) -> None:
    import numpy as np

    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert actual[name].dtype == value.dtype, name
        np.testing.assert_array_equal(actual[name], value, err_msg=name)
