"""A compat program trained from one initial checkpoint with its random draws removed, on TF 2.15 and here.

Seeds cannot make the port draw 2.15's initial weights, dropout masks or shuffles (other initialiser code, other
op seeds), so test_programs.py compares outcomes with the spread of 2.15's runs. Where that spread is the draws'
(mnist_colab evaluates after 46 steps, BatchNorm's moving statistics a third settled: 2.15 gave accuracy
0.29-0.57 over five seeds, the port 0.24-0.75 over four), this runs the program's own main() with the random
parts taken out of its source (RANDOM_PARTS: each must occur once), from a checkpoint written from numpy
before main() starts, so both engines train from the same state on the same batches, and reports every
checkpoint variable's sum and norm with the evaluation. `python same_start.py NAME --model_dir=D` runs the
port with this interpreter, or NAME_tf215.py on TF 2.15, where `--write` also keeps the report as
reference/NAME_same_start.json; test_same_start.py compares the two.

oneDNN is off (TF_ENABLE_ONEDNN_OPTS=0, set here before TensorFlow starts): TF 2.15 and 2.21 ship different
oneDNN versions, which pick different fp32 kernels on newer CPUs (AMX / AVX512-FP16 here: accuracy 0.4395 on
2.15 vs 0.4450 on 2.21 after the 46 steps); Eigen's kernels, the same in both, agree to ~1e-7 (0.4455 and 0.4455).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import types

import numpy as np

if "tensorflow" in sys.modules and os.environ.get("TF_ENABLE_ONEDNN_OPTS") != "0":  # a warm, forked interpreter
    sys.exit("same_start.py: TensorFlow was imported with oneDNN on, so this run would round unlike 2.15's; "
             "start it with TF_ENABLE_ONEDNN_OPTS=0 in its environment")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # before TensorFlow is imported (see above)

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS_DIR = HERE / "programs"
RESULT_PREFIX = "COMPAT_RESULT "

# program -> (checkpoint folder under --model_dir, [(random part of its source, what replaces it)])
RANDOM_PARTS = {
    "mnist_colab": ("mnistjobs/job", [
        ("dataset = dataset.shuffle(5000, reshuffle_each_iteration=True)", "pass"),
        ("y = tf.layers.Dropout(0.5)(y, training=is_training)", "pass"),
    ]),
}


def initial_value(name: str, shape: list[int], rng: np.random.RandomState) -> np.ndarray:
    """Glorot-uniform kernels, zero biases / betas / moving means / optimizer slots, unit moving variances, Adam's
    beta powers at their first-step values: a state either engine's own initialisers could have drawn."""
    if name == "global_step":
        return np.zeros([], np.int64)
    if name.endswith("beta1_power"):
        return np.full(shape, 0.9, np.float32)
    if name.endswith("beta2_power"):
        return np.full(shape, 0.999, np.float32)
    if name.endswith("moving_variance"):
        return np.ones(shape, np.float32)
    if len(shape) >= 2 and "/Adam" not in name:
        receptive = int(np.prod(shape[:-2]))
        limit = np.sqrt(6.0 / (receptive * (shape[-2] + shape[-1])))
        return rng.uniform(-limit, limit, shape).astype(np.float32)
    return np.zeros(shape, np.float32)


def write_initial_checkpoint(directory: str, shapes: dict[str, list[int]]) -> None:
    """A TF1 Saver checkpoint at step 0 holding `shapes`' variables (the program's own names), values from numpy."""
    import tensorflow.compat.v1 as tf1

    rng = np.random.RandomState(0)
    with tf1.Graph().as_default():
        variables = [tf1.Variable(initial_value(name, shapes[name], rng), name=name) for name in sorted(shapes)]
        with tf1.Session() as session:
            session.run(tf1.variables_initializer(variables))
            tf1.train.Saver(variables).save(session, os.path.join(directory, "model.ckpt"), global_step=0)


def checkpoint_summary(directory: str) -> dict[str, dict[str, float]]:
    """Every variable of the latest checkpoint in `directory`: its sum and L2 norm."""
    import tensorflow as tf

    reader = tf.train.load_checkpoint(directory)
    summary = {}
    for name in sorted(reader.get_variable_to_shape_map()):
        value = np.asarray(reader.get_tensor(name), np.float64)
        summary[name] = {"sum": float(value.sum()), "norm": float(np.sqrt((value ** 2).sum()))}
    return summary


def cpu_kind() -> str:
    """The CPU model and its vector extensions (Eigen's rounding can follow the vector width)."""
    try:
        info = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
    vector = sorted(f for f in set(flags) if f.startswith(("avx512f", "amx_", "avx2", "fma")))
    return f"{model} [{' '.join(vector)}]"


def load_program(name: str, original: bool) -> types.ModuleType:
    """The program's module with RANDOM_PARTS replaced (each found exactly once, or this fails naming it)."""
    script = PROGRAMS_DIR / (f"{name}_tf215.py" if original else f"{name}.py")
    source = script.read_text()
    for part, replacement in RANDOM_PARTS[name][1]:
        if source.count(part) != 1:
            raise SystemExit(f"{script.name}: expected {part!r} once, found it {source.count(part)} times")
        source = source.replace(part, replacement)
    module = types.ModuleType(f"{name}_same_start")
    module.__file__ = str(script)
    exec(compile(source, str(script), "exec"), module.__dict__)  # noqa: S102 - our own test program
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name", choices=sorted(RANDOM_PARTS))
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--write", action="store_true", help="on TF 2.15: keep the report as the reference")
    args = parser.parse_args()
    sys.path.insert(0, str(PROGRAMS_DIR))
    import compat_support
    import tensorflow as tf

    original = tf.__version__.startswith("2.15")
    shapes = json.loads((HERE / "reference" / f"{args.name}.json").read_text())["runs"][0]["variables"]
    checkpoint_dir = os.path.join(args.model_dir, RANDOM_PARTS[args.name][0])
    os.makedirs(checkpoint_dir)
    write_initial_checkpoint(checkpoint_dir, shapes)
    reports = []
    compat_support.emit = reports.append
    program = load_program(args.name, original)
    sys.argv = [sys.argv[0], f"--model_dir={args.model_dir}"]
    program.main()
    report = compat_support.jsonable({
        "program": args.name, "tensorflow": tf.__version__, "eval": reports[-1]["eval"],
        "variables": checkpoint_summary(checkpoint_dir), "cpu": cpu_kind()})
    print(RESULT_PREFIX + json.dumps(report, sort_keys=True), flush=True)
    if args.write:
        if not original:
            raise SystemExit("--write keeps TF 2.15's numbers: run it with TF 2.15.1 + tensorflow-estimator 2.15.0")
        report["made_by"] = f"python tests/compat/same_start.py {args.name} --model_dir=DIR --write"
        path = HERE / "reference" / f"{args.name}_same_start.json"
        path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
