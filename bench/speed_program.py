"""Runs one contender's speed program in its own Python and returns the JSON it prints on its `SPEED ` line."""

from __future__ import annotations

import json
import os
import subprocess


def run_speed_program(program: str, python: str, argv: list[str], env: dict | None = None) -> dict:
    """`python -c program *argv` with the repository on PYTHONPATH; RuntimeError with stderr's tail on failure."""
    full_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **(env or {}))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    full_env["PYTHONPATH"] = root + os.pathsep + full_env.get("PYTHONPATH", "")
    done = subprocess.run([python, "-c", program, *argv], capture_output=True, text=True, env=full_env, timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith("SPEED ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{argv[0] if argv else python} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[0][len("SPEED "):])
