"""What the finiteness check costs a checkpoint save: the seed CNN's weights and Adam slots, side by side.

    python bench/nonfinite_check.py [--repeats 15]

Times finite.nonfinite_variables alone (one compiled reduction over every float variable, the first call
traced), and Checkpointer.save with and without it (the check replaced by `lambda: []`), alternating the
two so machine noise falls on both. Medians over the repeats, first (tracing) call reported apart.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

from bench.checkpoint_save import seed_cnn_variables
from estimators.checkpoint import checkpointer as checkpointer_module
from estimators.checkpoint import finite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "nonfinite_bench"))
    args = parser.parse_args()
    variables = seed_cnn_variables(with_adam=True)
    started = time.perf_counter()
    finite.nonfinite_variables(variables)
    first = time.perf_counter() - started
    checks = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        finite.nonfinite_variables(variables)
        checks.append(time.perf_counter() - started)
    shutil.rmtree(args.dir, ignore_errors=True)
    checkpointer = checkpointer_module.Checkpointer(args.dir, max_to_keep=2)
    real = finite.nonfinite_variables
    times: dict[bool, list[float]] = {True: [], False: []}
    step = 0
    for _ in range(args.repeats):
        for checked in (True, False):
            finite.nonfinite_variables = real if checked else (lambda variables: [])
            step += 1
            started = time.perf_counter()
            checkpointer.save(variables, step)
            times[checked].append(time.perf_counter() - started)
    finite.nonfinite_variables = real
    shutil.rmtree(args.dir, ignore_errors=True)
    with_check, without = statistics.median(times[True]), statistics.median(times[False])
    print(f"{len(variables)} variables: check alone {statistics.median(checks) * 1e3:.2f} ms (first call, traced: "
          f"{first * 1e3:.0f} ms); save with check {with_check * 1e3:.1f} ms, without {without * 1e3:.1f} ms, "
          f"ratio {with_check / without:.3f}")


if __name__ == "__main__":
    main()
