"""GPU check: the seed CNN through TPUEstimator on every visible GPU, float32 / bfloat16, XLA off / on.

`python bench/gpu_check.py` trains model_fns' cnn on synthetic 28x28x1 data and prints examples/sec
for each precision and XLA setting (RunConfig(jit_compile=...)), then the seed workload's wall time
(500 steps x global batch 1024, iterations_per_loop 100, float32, XLA off: what main.py runs).
Every run is a fresh child process (`--child`), timed by bench's StepClock from the engine's
per-loop log lines (bench.contenders.ours.LoopMarks), and reported with bench.report's tables.

bfloat16 is the engine's precision setting (params["precision"]="bfloat16", the same as main.py's
--precision: Keras' `mixed_bfloat16` policy around every model_fn call, in every replica thread).
Under several GPUs the engine refuses jit_compile=True (see estimators/tf2/state.py); those
runs are listed as failures with the engine's message.

  python bench/gpu_check.py                    # on a GPU machine (exits with a message without one)
  python bench/gpu_check.py --num_gpus 1       # the first GPU only (OneDeviceStrategy)
  python bench/gpu_check.py --cpu_smoke        # a few tiny steps on the CPU: checks the script itself
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import launcher, report  # noqa: E402

WORKLOAD = "cnn_synthetic"
SEED_WORKLOAD = "seed_cnn_500x1024"
CONFIGS = (("float32", False), ("float32", True), ("mixed_bfloat16", False), ("mixed_bfloat16", True))
NO_GPU = (
    "No GPU is visible to TensorFlow (tf.config.list_physical_devices('GPU') is empty). Install the GPU "
    "build (pip install -e \".[gpu]\"), check nvidia-smi and CUDA_VISIBLE_DEVICES, or pass --cpu_smoke to "
    "check this script on the CPU."
)


@dataclasses.dataclass(frozen=True)
class Run:
    """One child process: the cnn at one precision and XLA setting, or the seed workload."""

    workload: str
    precision: str
    xla: bool
    batch_size: int  # global
    iterations_per_loop: int
    warmup_steps: int
    timed_steps: int
    num_gpus: int | None
    seed: int

    @property
    def label(self) -> str:
        """bench.report's "precision" column: the Keras policy, plus "+xla" with jit_compile."""
        return self.precision + ("+xla" if self.xla else "")

    def as_job(self) -> dict:
        """The `job` fields bench.report.aggregate reads."""
        return {"workload": self.workload, "contender": "ours", "iterations_per_loop": self.iterations_per_loop,
                "precision": self.label, "warmup_steps": self.warmup_steps, "timed_steps": self.timed_steps,
                "repeat": 0}


def plan(args: argparse.Namespace) -> list[Run]:
    """The four precision/XLA runs, then the seed workload (tiny versions of all with --cpu_smoke)."""
    if args.cpu_smoke:
        batch, k, warmup, timed, seed_steps = 16, 2, 2, 2, 4
    else:
        batch, k, warmup, timed, seed_steps = args.batch_size, args.iterations, args.warmup, args.steps, 500
    runs = [Run(WORKLOAD, precision, xla, batch, k, warmup, timed, args.num_gpus, args.seed)
            for precision, xla in CONFIGS]
    seed_k = k if args.cpu_smoke else 100
    seed_batch = batch if args.cpu_smoke else 1024
    runs.append(Run(SEED_WORKLOAD, "float32", False, seed_batch, seed_k, seed_k, seed_steps - seed_k,
                    args.num_gpus, args.seed))
    return runs


# -- child ---------------------------------------------------------------------------------------------


def measure(run: Run, spawn_time: float) -> dict:
    """Trains as `run` says in this process; returns bench.report's result fields (raises on failure)."""
    import logging
    import shutil

    import keras
    import tensorflow as tf
    from absl import logging as absl_logging

    from bench import models
    from bench.clock import StepClock
    from bench.contenders.ours import NEVER, LoopMarks
    from bench.worker import peak_rss_mb
    from estimators import RunConfig, TPUConfig, TPUEstimator
    from estimators.distribute.strategy import local_strategy
    from estimators.training import progress_display

    keras.utils.set_random_seed(run.seed)
    progress_display.configure(enabled=False)  # per-loop log lines at INFO, no live display
    absl_logging.set_verbosity(absl_logging.INFO)
    absl_logging.get_absl_handler().setLevel(logging.WARNING)
    clock = StepClock(spawn_time)
    handler = LoopMarks(clock)
    logging.getLogger("absl").addHandler(handler)
    model_dir = tempfile.mkdtemp(prefix="gpu_check_")
    try:
        data = models.source("synthetic", (28, 28, 1))
        k = run.iterations_per_loop
        config = RunConfig(
            model_dir=model_dir, tf_random_seed=run.seed, save_checkpoints_steps=NEVER, save_summary_steps=NEVER,
            log_step_count_steps=k, tpu_config=TPUConfig(iterations_per_loop=k), jit_compile=run.xla,
            train_distribute=local_strategy(run.num_gpus) if run.num_gpus is not None else None,
        )
        params = dict(models.params("cnn"), precision=models.engine_precision(run.precision))
        estimator = TPUEstimator(models.model_fn("cnn"), config=config, params=params,
                                 use_tpu=False, train_batch_size=run.batch_size)
        started = time.time()
        estimator.train(data.input_fn("train", seed=run.seed), max_steps=run.warmup_steps + run.timed_steps)
        train_seconds = time.time() - started
    finally:
        logging.getLogger("absl").removeHandler(handler)
        shutil.rmtree(model_dir, ignore_errors=True)
    gpus = tf.config.list_logical_devices("GPU")
    used = gpus[: run.num_gpus] if run.num_gpus is not None else gpus
    return {
        "ok": True,
        "examples_per_sec": clock.examples_per_sec(run.warmup_steps, run.timed_steps, run.batch_size),
        "first_step_seconds": clock.first_step_seconds(),
        "train_seconds": train_seconds,
        "steps_trained": clock.marks[-1][0],
        "peak_rss_mb": peak_rss_mb(),
        "devices": [d.name for d in used] or ["CPU"],
        "tf_version": tf.__version__,
        "keras_version": keras.__version__,
    }


def child_main(run_json: str, spawn_time: float, out: str) -> int:
    run = Run(**json.loads(run_json))
    try:
        result = measure(run, spawn_time)
    except Exception as err:  # reported by the parent, which carries on with the other runs
        result = {"ok": False, "error": f"{type(err).__name__}: {err}"}
    with open(out, "w") as f:
        json.dump({"job": run.as_job(), **result}, f)
    return 0 if result["ok"] else 1


# -- parent --------------------------------------------------------------------------------------------


def spawn(run: Run, timeout_s: float) -> dict:
    """Runs `run` in a fresh interpreter; the child's result, with the wall time from spawn to exit."""
    return launcher.run_child(["-m", "bench.gpu_check", "--child", json.dumps(dataclasses.asdict(run))],
                              run.as_job(), timeout_s)


def visible_gpus() -> list[str]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    return [d.name for d in tf.config.list_physical_devices("GPU")]


def seed_table(results: list[dict]) -> str:
    header = "| workload | devices | steps x global batch | K | train() s | spawn to exit s | ex/s after loop 1 |"
    lines = [header, "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        job = r["job"]
        if not r.get("ok"):
            lines.append(f"| {job['workload']} | - | - | - | failed | - | - |")
            continue
        steps = job["warmup_steps"] + job["timed_steps"]
        lines.append(f"| {job['workload']} | {', '.join(r['devices'])} | {steps} x {r['batch_size']} | "
                     f"{job['iterations_per_loop']} | {r['train_seconds']:.1f} | {r['process_seconds']:.1f} | "
                     f"{r['examples_per_sec']:.0f} |")
    return "\n".join(lines)


def markdown(results: list[dict]) -> str:
    """The throughput table, speed-ups against float32 without XLA, failures, and the seed workload."""
    checks = [r for r in results if r["job"]["workload"] == WORKLOAD]
    seed = [r for r in results if r["job"]["workload"] == SEED_WORKLOAD]
    rows = report.aggregate(checks)
    parts = ["### Throughput (precision +xla: RunConfig(jit_compile=True))", "", report.throughput_table(rows)]
    speedups = report.precision_comparison(rows, base="float32")
    if speedups:
        parts += ["", "### Speed-up against float32 without XLA", "", report.precision_table(speedups)]
    parts += ["", "### Seed workload (float32, XLA off)", "", seed_table(seed)]
    failed = [r for r in results if not r.get("ok")]
    if failed:
        parts += ["", "### Failures", ""] + [
            f"- {r['job']['workload']} {r['job']['precision']}: {r.get('error', '')[:400]}" for r in failed]
    return "\n".join(parts)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num_gpus", type=int, default=None, help="use the first N GPUs (default: every visible GPU)")
    p.add_argument("--batch_size", type=int, default=1024, help="global batch of the precision/XLA runs")
    p.add_argument("--iterations", type=int, default=100, help="iterations_per_loop of the precision/XLA runs")
    p.add_argument("--warmup", type=int, default=100, help="untimed steps (compilation), a multiple of --iterations")
    p.add_argument("--steps", type=int, default=200, help="timed steps, a multiple of --iterations")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--timeout", type=float, default=900.0, help="seconds before a child run is killed")
    p.add_argument("--json", default=None, help="also write every run's result to this file")
    p.add_argument("--cpu_smoke", action="store_true",
                   help="tiny runs (batch 16, 2+2 steps) on whatever is visible, GPU or not: checks the script")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--spawn_time", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not args.cpu_smoke and (args.warmup % args.iterations or args.steps % args.iterations or args.warmup < 1):
        p.error(f"--warmup ({args.warmup}) and --steps ({args.steps}) must be positive multiples of "
                f"--iterations ({args.iterations}).")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        return child_main(args.child, args.spawn_time, args.out)
    gpus = visible_gpus()
    if not gpus and not args.cpu_smoke:
        print(NO_GPU, file=sys.stderr)
        return 2
    print(f"GPUs visible: {len(gpus)} ({', '.join(gpus) or 'none'}); using "
          f"{'all' if args.num_gpus is None else args.num_gpus}.", flush=True)
    results = []
    for run in plan(args):
        print(f"running {run.workload} {run.label} (batch {run.batch_size}, "
              f"{run.warmup_steps}+{run.timed_steps} steps)...", flush=True)
        result = spawn(run, args.timeout)
        result["batch_size"] = run.batch_size
        results.append(result)
    print()
    print(markdown(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r.get("ok") for r in results if r["job"]["precision"] == "float32") else 1


if __name__ == "__main__":
    sys.exit(main())
