"""One command, three contenders, side by side: `python bench/throughput.py [flags]`.

Trains the same model on the same data with (a) ours, the project's TPUEstimator, (b) a
hand-written tf.function step (the no-framework floor) and (c) Keras 3 Model.fit with
steps_per_execution = iterations_per_loop. Every run is its own child process; runs are
alternated round-robin over the repetitions. Prints Markdown tables; --json writes the rows.

Examples:
  python bench/throughput.py --quick                      # smoke run, numbers meaningless
  python bench/throughput.py --json bench/results/full.json
  python bench/throughput.py --workloads cnn_fmnist --iterations 100 --precision float32,mixed_bfloat16 \
      --accuracy --warmup 100 --steps 200 --repeats 1 --json bench/results/bf16.json
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import launcher, plan, report  # noqa: E402

QUICK = {"repeats": 1, "warmup": 2, "steps": 4, "iterations": (1, 4), "input_steps": 200}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default=",".join(plan.WORKLOADS),
                   help=f"comma list from {list(plan.WORKLOADS)} (cnn_fmnist is skipped without the data)")
    p.add_argument("--contenders", default=",".join(plan.CONTENDERS), help=f"comma list from {plan.CONTENDERS}")
    p.add_argument("--iterations", default=None,
                   help="iterations_per_loop (ours) = steps_per_execution (keras_fit) to sweep "
                        "(default: per workload, see README)")
    p.add_argument("--hand_iterations", default=None,
                   help="K for the hand loop (1 = one call per step, K>1 = tf.range inside the call); "
                        "default 1, or the --iterations sweep on the mlp")
    p.add_argument("--repeats", type=int, default=None, help="repetitions of every run (default 3)")
    p.add_argument("--steps", type=int, default=None,
                   help="timed steps per run (default per workload), rounded up to whole executions")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed warm-up steps per run, covering compilation (default per workload), "
                        "rounded up to whole executions (at least one)")
    p.add_argument("--precision", default="float32",
                   help="comma list from float32,mixed_bfloat16; with both, the speed-up is reported")
    p.add_argument("--accuracy", action="store_true",
                   help="also report test accuracy after training (fix --warmup/--steps to multiples of every K "
                        "so all contenders train the same number of steps)")
    p.add_argument("--no_input_check", action="store_true", help="skip the input_fn-alone throughput check")
    p.add_argument("--seed", type=int, default=1234, help="seeds Keras/TF/numpy and the data shuffle")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds before a child run is killed")
    p.add_argument("--quick", action="store_true", help=f"tiny smoke-run settings {QUICK} (flags given win)")
    p.add_argument("--list", action="store_true", help="print the runs in order and exit")
    p.add_argument("--json", default=None, help="write rows, ratios, targets and raw runs to this file")
    return p.parse_args(argv)


def settings_from(args: argparse.Namespace) -> plan.Settings:
    quick = QUICK if args.quick else {}
    workloads = plan.parse_list(args.workloads, list(plan.WORKLOADS))
    skipped = [w for w in workloads if not plan.WORKLOADS[w].available()]
    for name in skipped:
        print(f"note: skipping {name}: Fashion-MNIST not found in {plan.FASHION_MNIST_DIR}", file=sys.stderr)
    return plan.Settings(
        workloads=tuple(w for w in workloads if w not in skipped),
        contenders=plan.parse_list(args.contenders, plan.CONTENDERS),
        iterations=plan.parse_ints(args.iterations) if args.iterations else quick.get("iterations"),
        hand_iterations=plan.parse_ints(args.hand_iterations) if args.hand_iterations else None,
        repeats=args.repeats if args.repeats is not None else quick.get("repeats", 3),
        steps=args.steps if args.steps is not None else quick.get("steps"),
        warmup=args.warmup if args.warmup is not None else quick.get("warmup"),
        precisions=plan.parse_list(args.precision, plan.PRECISIONS),
        accuracy=args.accuracy,
        input_check=not args.no_input_check,
        seed=args.seed,
        timeout_s=args.timeout,
        input_steps=quick.get("input_steps", 1000),
    )


def machine() -> dict:
    """What the numbers were measured on."""
    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    versions = {}
    for package in ("tensorflow", "tensorflow-cpu", "keras"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "packages": versions,
            "loadavg_at_start": os.getloadavg()}


def engine_version() -> dict:
    """The commit measured, and any uncommitted changes to the engine, models or input code."""
    root = launcher.ROOT

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    changed = git("status", "--porcelain", "--", "estimators", "model_fns", "input_fns")
    return {"commit": git("rev-parse", "HEAD"), "uncommitted": changed.splitlines()}


def _progress(i: int, n: int, result: dict) -> str:
    job = result["job"]
    name = f"{job['workload']} {job['precision']} K={job['iterations_per_loop']} {job['contender']} rep{job['repeat']}"
    if not result.get("ok"):
        return f"[{i}/{n}] {name}: FAILED {result.get('error', '')[:200]}"
    return (f"[{i}/{n}] {name}: {result['examples_per_sec']:.1f} ex/s, first step {result['first_step_seconds']:.2f}"
            f" s, peak RSS {result['peak_rss_mb']:.0f} MB, process {result.get('process_seconds', 0):.1f} s")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = settings_from(args)
    jobs = plan.round_robin(settings)
    if args.list:
        for job in jobs:
            print(job)
        return 0
    started = time.time()
    meta = {"command": " ".join(["python", "bench/throughput.py", *sys.argv[1:]]) if argv is None else argv,
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": machine(), "engine": engine_version(), "settings": {k: v for k, v in vars(settings).items()}}
    print(f"{len(jobs)} runs: {settings}", file=sys.stderr)
    results = []
    for i, job in enumerate(jobs, start=1):
        result = launcher.run_job(job, settings.timeout_s)
        results.append(result)
        print(_progress(i, len(jobs), result), file=sys.stderr, flush=True)
    meta["seconds"] = time.time() - started
    meta["loadavg_at_end"] = os.getloadavg()
    versions = {(r.get("tf_version"), r.get("keras_version")) for r in results if r.get("ok")}
    meta["tf_keras_versions_in_children"] = sorted(versions)

    rows = report.aggregate(results)
    ratio_entries = report.ratios(rows)
    checks = report.targets(ratio_entries)
    precision = report.precision_comparison(rows) if len(settings.precisions) > 1 else []
    print(report.markdown(rows, ratio_entries, checks, precision))
    print(f"\n{len(jobs)} runs in {meta['seconds'] / 60:.1f} min; {meta['machine']['cpu']}, "
          f"{meta['machine']['cores']} cores; TF/Keras {meta['tf_keras_versions_in_children']}")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": [r for r in rows if r["contender"] != plan.INPUT_CHECK],
                       "input_pipeline": [r for r in rows if r["contender"] == plan.INPUT_CHECK],
                       "ratios": ratio_entries, "targets": checks, "precision": precision, "runs": results},
                      f, indent=1, default=str)
        print(f"wrote {args.json}")
    return 0 if all(r.get("ok") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
