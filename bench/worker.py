"""Child process: runs one Job (one contender, workload, K, precision) and writes its result as JSON.

Started by bench.launcher as `python -m bench.worker --job JSON --spawn_time T --out FILE`.
Precision and seeds are set here, before any model is built, identically for every contender.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import traceback

from bench.clock import StepClock
from bench.plan import WORKLOADS, Job


def peak_rss_mb() -> float:
    """This process' peak resident set size so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(job: Job, spawn_time: float) -> dict:
    """Trains as the job says and returns the measurements (raises on any failure)."""
    entered = time.time()
    import keras
    import tensorflow as tf

    from bench.contenders import runner

    imported = time.time()

    if job.contender != "ours":  # ours sets the policy around each model_fn call (params["precision"])
        keras.mixed_precision.set_global_policy(job.precision)
    keras.utils.set_random_seed(job.seed)
    clock = StepClock(spawn_time)
    extra = runner(job.contender)(job, WORKLOADS[job.workload], clock)
    seconds = clock.seconds_between(job.warmup_steps, job.warmup_steps + job.timed_steps)
    return {
        "ok": True,
        "examples_per_sec": job.timed_steps * job.batch_size / seconds,
        "window_seconds": seconds,
        "first_step_seconds": clock.first_step_seconds(),
        # Where the time to first step went: interpreter start, TF/Keras import, then the contender.
        "startup_seconds": entered - spawn_time,
        "import_seconds": imported - entered,
        "steps_trained": clock.marks[-1][0],
        "peak_rss_mb": peak_rss_mb(),
        "tf_version": tf.__version__,
        "keras_version": keras.__version__,
        # Seconds since spawn at each execution end, to check the warm-up reached steady state.
        "marks": [(steps, round(at - spawn_time, 4)) for steps, at in clock.marks] if len(clock.marks) <= 300 else None,
        **extra,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--job", required=True, help="Job fields as JSON")
    parser.add_argument("--spawn_time", required=True, type=float, help="parent's time.time() at spawn")
    parser.add_argument("--out", required=True, help="where to write the result JSON")
    args = parser.parse_args(argv)
    job = Job(**json.loads(args.job))
    try:
        result = measure(job, args.spawn_time)
    except Exception as err:  # reported by the parent, which carries on with the other runs
        traceback.print_exc()
        result = {"ok": False, "error": f"{type(err).__name__}: {err}", "peak_rss_mb": peak_rss_mb()}
    with open(args.out, "w") as f:
        json.dump({"job": job.to_dict(), **result}, f)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
