"""Starts one child process per Job and collects what it measured.

The spawn time handed to the child is taken just before the process is created, so the
child's "time to first step" covers interpreter start, imports, data loading and compilation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from bench.plan import Job

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# How a child is started: subprocess.run's signature. The tests point it at tests.launcher.run, which forks
# children from an interpreter that imported TensorFlow already (their start-up times then mean nothing).
run_process = subprocess.run


def child_env() -> dict[str, str]:
    """The parent's environment, with the repository importable and TensorFlow's C++ logs quiet."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH", "")) if p)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def run_job(job: Job, timeout_s: float) -> dict:
    """Runs `job` in a fresh interpreter; returns the child's result dict (ok=False on any failure)."""
    return run_child(["-m", "bench.worker", "--job", json.dumps(job.to_dict())], job.to_dict(), timeout_s)


def run_child(args: list[str], job: dict, timeout_s: float) -> dict:
    """Runs `python <args> --out F --spawn_time T`; the JSON the child wrote to F, with the wall time from spawn
    to exit (ok=False with the reason on a timeout, a crash, or a failed run)."""
    with tempfile.TemporaryDirectory(prefix="bench_job_") as tmp:
        out = os.path.join(tmp, "result.json")
        spawn_time = time.time()
        try:
            proc = run_process([sys.executable, *args, "--out", out, "--spawn_time", repr(spawn_time)], cwd=ROOT,
                               env=child_env(), capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {"job": job, "ok": False, "error": f"timed out after {timeout_s:.0f} s"}
        wall = time.time() - spawn_time
        if not os.path.exists(out):
            tail = (proc.stderr or proc.stdout or "")[-2000:]
            return {"job": job, "ok": False, "error": f"exit {proc.returncode}: {tail}"}
        with open(out) as f:
            result = json.load(f)
        result["process_seconds"] = wall
        if not result.get("ok"):
            result["stderr_tail"] = (proc.stderr or "")[-2000:]
        return result
