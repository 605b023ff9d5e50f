"""bfloat16 against float32 accuracy of the built-in cnn: trained through main.py, evaluated two ways.

For every seed and precision, `main.py --mode=train` trains into OUT/s<seed>-<precision> (a fresh
process each). Each checkpoint is then evaluated on the test split twice, in its own precision:
with BatchNorm's moving statistics (what evaluate() reports) and with each test batch's own
statistics (no dropout), a diagnostic that separates the trained weights from the moving averages
(BUILD_NOTES "bfloat16 accuracy at full training"). Prints a table and the mean gaps.

  python bench/bf16_accuracy.py --seeds 1234,7,2026     # main.py's defaults: 600 x 1024, ~35 min a seed on 2 cores
  python bench/bf16_accuracy.py --seeds 1 --dataset synthetic --train_steps 3 --train_batch_size 16 --eval_batch_size 50
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.launcher import ROOT, child_env  # noqa: E402

PRECISIONS = ("float32", "bfloat16")


def _train(model_dir: str, seed: int, precision: str, args: argparse.Namespace) -> None:
    """main.py --mode=train in a fresh process (as a user runs it); stops the script on failure."""
    command = [sys.executable, os.path.join(ROOT, "main.py"), "--model=cnn", "--mode=train", f"--seed={seed}",
               f"--precision={precision}", f"--model_dir={model_dir}", f"--train_steps={args.train_steps}",
               f"--train_batch_size={args.train_batch_size}", f"--dataset={args.dataset}", "--verbosity=0"]
    if args.data_dir:
        command.append(f"--data_dir={args.data_dir}")
    proc = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"training {model_dir} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")


def _evaluate(model_dir: str, seed: int, precision: str, args: argparse.Namespace) -> dict[str, float]:
    """Test accuracy of the newest checkpoint with moving and with per-batch BatchNorm statistics."""
    import keras

    import input_fns
    from estimators import RunConfig, TPUEstimator
    from model_fns import cnn, common

    def model_fn(features, labels, mode, params):
        images = cnn.normalize(common.image_tensor(features))
        model = cnn.build_cnn(images.shape[1:])
        outputs = images
        for layer in model.layers[:-1]:  # the network before its softmax, as cnn.logits; dropout off
            batch_norm = isinstance(layer, keras.layers.BatchNormalization)
            outputs = layer(outputs, training=batch_norm and params["batch_statistics"])
        return common.classifier_spec(mode, outputs, labels, lambda: keras.optimizers.Adam(), model.trainable_variables)

    input_fn = input_fns.get_dataset(args.dataset).input_fn("eval", args.data_dir, seed=seed)
    results = {}
    for batch_statistics in (False, True):
        estimator = TPUEstimator(model_fn, config=RunConfig(model_dir=model_dir, precision=precision), use_tpu=False,
                                 params={"batch_statistics": batch_statistics}, train_batch_size=args.eval_batch_size,
                                 eval_batch_size=args.eval_batch_size)
        accuracy = float(estimator.evaluate(input_fn)["accuracy"])
        results["batch_statistics" if batch_statistics else "moving"] = round(100 * accuracy, 2)
    return results


def _table(rows: list[dict]) -> str:
    lines = ["| seed | float32 | bfloat16 | gap | float32, batch statistics | bfloat16, batch statistics | gap |",
             "|---|---|---|---|---|---|---|"]

    def line(label, f_moving, b_moving, f_batch, b_batch):
        return (f"| {label} | {f_moving:.2f} | {b_moving:.2f} | {b_moving - f_moving:+.2f} | {f_batch:.2f} | "
                f"{b_batch:.2f} | {b_batch - f_batch:+.2f} |")

    columns = []
    for row in rows:
        values = (row["float32"]["moving"], row["bfloat16"]["moving"], row["float32"]["batch_statistics"],
                  row["bfloat16"]["batch_statistics"])
        columns.append(values)
        lines.append(line(row["seed"], *values))
    if len(rows) > 1:
        lines.append(line("mean", *(statistics.fmean(c) for c in zip(*columns, strict=True))))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1234", help="comma list of seeds")
    parser.add_argument("--train_steps", type=int, default=600)
    parser.add_argument("--train_batch_size", type=int, default=1024)
    parser.add_argument("--eval_batch_size", type=int, default=1000)
    parser.add_argument("--dataset", default="fashion_mnist")
    parser.add_argument("--data_dir", default=None)
    parser.add_argument("--out", default=None, help="folder for the model_dirs (default: a temporary one)")
    parser.add_argument("--json", default=None, help="write the rows here")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s]
    out = args.out or tempfile.mkdtemp(prefix="bf16_accuracy_")
    rows = []
    for seed in seeds:
        row = {"seed": seed}
        for precision in PRECISIONS:
            model_dir = os.path.join(out, f"s{seed}-{precision}")
            print(f"seed {seed}, {precision}: training into {model_dir}", flush=True)
            _train(model_dir, seed, precision, args)
            row[precision] = _evaluate(model_dir, seed, precision, args)
            print(f"seed {seed}, {precision}: {row[precision]}", flush=True)
        rows.append(row)
    print(_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
