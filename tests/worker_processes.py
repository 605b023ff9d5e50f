"""Worker processes of a TF_CONFIG cluster on 127.0.0.1, for the multi-worker tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_ports(n: int) -> list[int]:
    """`n` ports free on 127.0.0.1 now."""
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_workers(program: str, args: list[str], count: int = 2, timeout: float = 240) -> list[dict]:
    """Runs `python -c program *args` as each worker of a `count`-worker cluster (worker 0 the chief); returns
    the JSON each printed after "RESULT ". A worker that fails or a run that outlasts `timeout` fails the test."""
    workers = [f"127.0.0.1:{port}" for port in free_ports(count)]
    processes = []
    for index in range(count):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = dict(os.environ, TF_CONFIG=json.dumps(tf_config), PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
        processes.append(subprocess.Popen([sys.executable, "-c", program, *args], cwd=ROOT, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    finished = []
    for process in processes:
        try:
            finished.append(process.communicate(timeout=timeout))
        except subprocess.TimeoutExpired:
            for p in processes:
                p.kill()
            pytest.fail(f"the {count} workers did not finish in {timeout:.0f} s")
    failed = [f"worker {i} exited {p.returncode}:\n{err[-3000:]}"
              for i, (p, (_, err)) in enumerate(zip(processes, finished, strict=True)) if p.returncode != 0]
    assert not failed, "\n".join(failed)
    return [json.loads(out.split("RESULT ", 1)[1].splitlines()[0]) for out, _ in finished]
