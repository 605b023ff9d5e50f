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


def taking_turns(measures: dict[str, Callable[[], float]], rounds: int, unit: str, digits: int) -> dict:
    """Every contender's measurements over `rounds`, the contenders taking turns (ABCABC...) so the machine's
    drift hits all alike; each measurement is printed as it comes."""
    values: dict[str, list[float]] = {name: [] for name in measures}
    for round_ in range(rounds):
        for name, measure in measures.items():
            values[name].append(measure())
            print(f"round {round_ + 1} {name}: {values[name][-1]:.{digits}f} {unit}", flush=True)
    return values


def summary(values: dict[str, list[float]], higher_is_better: bool) -> dict:
    """Each contender's median and best measurement.

    The best is the figure to compare: on these shared machines a process settles at one of two speeds about
    2x apart, whatever the code, so medians of a few processes compare the machine's luck; noise only ever
    slows a process, and with enough rounds every contender reaches the fast speed at least once.
    """
    best = max if higher_is_better else min
    return {"median": {name: statistics.median(found) for name, found in values.items()},
            "best": {name: best(found) for name, found in values.items()},
            "all": values}


def ratios(figures: dict, numerator: str, denominator: str) -> dict:
    """numerator / denominator for the median and for the best figures."""
    return {kind: figures[kind][numerator] / figures[kind][denominator] for kind in ("median", "best")}
