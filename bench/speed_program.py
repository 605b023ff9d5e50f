"""Side-by-side speed runs: one contender's program in its own Python (the JSON of its `SPEED ` line), in turns."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from collections.abc import Callable


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


def medians_taking_turns(measures: dict[str, Callable[[], float]], rounds: int, unit: str, digits: int) -> dict:
    """Each contender's median over `rounds`, the contenders taking turns (ABCABC...) so the machine's drift
    hits all alike; every measurement is printed as it comes."""
    values: dict[str, list[float]] = {name: [] for name in measures}
    for round_ in range(rounds):
        for name, measure in measures.items():
            values[name].append(measure())
            print(f"round {round_ + 1} {name}: {values[name][-1]:.{digits}f} {unit}", flush=True)
    return {name: statistics.median(found) for name, found in values.items()}
