"""Bad input, one row per case: what the user does, what they get, and what the message must say.

Through main.py (CLI rows) the answer is an exit status: 2 when the command line is wrong whatever the
machine (nothing is run), 1 when the run failed here (data, model_dir, TPU, the model), 0 for the cases
we allow (each says why). A failing run prints one or two lines starting "error:", names the bad value
and the fix, and never a Python traceback. Through the Python API (API rows) the answer is an exception
type and message. In every failing row, model_dir and export_dir are byte for byte what they were.

Decisions (where tf.estimator 2.15 guided them):
- float labels for the project's sparse-softmax classifiers are an error at the first trace, as
  tf.estimator's MultiClassHead refused non-integer labels (head/multi_class_head.py); casting would
  silently truncate 2.7 to class 2.
- NaN/Inf evaluation results are returned, as tf.estimator returned them, with a warning naming the
  metrics and the likely cause (an error would lose the other metrics and break 2.15's contract).
- a garbage `checkpoint` state file is ignored with a warning, the newest complete checkpoint is used
  (TensorFlow's get_checkpoint_state, which tf.estimator used, ignored an unparsable one too).
- iterations_per_loop > train_steps runs exactly train_steps: the last loop is cut to the steps left,
  as TPUEstimator's stop-at-step hook cut its last loop.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import math
import os
import pickle
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import keras
import numpy as np
import pytest
import tensorflow as tf

import input_fns
import model_fns
from estimators import CrossShardOptimizer, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from estimators.checkpoint.model_dir_check import ModelDirError
from estimators.distribute.strategy import NoTPUError
from estimators.training.hooks import NanLossError
from tests import engine_models as m
from tests import launcher
from tests.gcs_emulator import GcsEmulator, unavailable_reason

ROOT = Path(__file__).resolve().parents[1]
TINY = ("--train_batch_size=8", "--eval_batch_size=50", "--predict_batch_size=50", "--iterations_per_loop=2",
        "--train_steps=2", "--save_checkpoints_steps=2")
SYNTHETIC = (*TINY, "--dataset=synthetic")
ALLOWED = None  # `expect` of a case that is not an error
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# -- files the cases need ----------------------------------------------------------------------------
def idx_files(folder: Path, *, truncate: bool = False, magic: int = 2051, label: int = 3) -> None:
    """Fashion-MNIST test files (10 images), optionally damaged."""
    folder.mkdir(parents=True, exist_ok=True)
    images = struct.pack(">iiii", magic, 10, 28, 28) + bytes(10 * 28 * 28)
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz", "wb") as f:
        f.write(images[: len(images) // 2] if truncate else images)
    with gzip.open(folder / "t10k-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">ii", 2049, 10) + bytes([label] * 10))


def cifar_bin(folder: Path, *, records: float = 2, label: int = 1) -> None:
    """CIFAR-10 binary test batch of `records` records (a fraction truncates it)."""
    folder.mkdir(parents=True, exist_ok=True)
    record = bytes([label]) + bytes(3072)
    (folder / "test_batch.bin").write_bytes((record * 3)[: int(records * len(record))])


def cifar_pickle_running_code(folder: Path) -> None:
    """A python-version test batch whose unpickling would call os.system."""
    folder.mkdir(parents=True, exist_ok=True)

    class Payload:
        def __reduce__(self):
            return os.system, ("echo pwned > " + str(folder / "pwned"),)

    (folder / "test_batch").write_bytes(pickle.dumps(Payload()))


def garbage_state_file(model_dir: Path) -> None:
    (model_dir / "checkpoint").write_bytes(b"\xff\xfe\x00 not a CheckpointState \x80")


def write_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("I am a file")


def folder_digest(path: Path) -> dict[str, str] | None:
    """relative path -> sha256 of every file under `path` (None when it does not exist)."""
    if not path.exists():
        return None
    if path.is_file():
        return {".": hashlib.sha256(path.read_bytes()).hexdigest()}
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(path.rglob("*"))}


# -- the CLI table -----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Cli:
    """`python main.py <argv>`: {d} is this case's own folder, model_dir is {d}/md unless argv says otherwise."""

    name: str
    argv: tuple[str, ...]
    exit: int  # 2 usage, 1 runtime failure, 0 allowed
    words: tuple[str, ...]  # in stderr (a failure's message) or stdout+stderr (an allowed case)
    absent: tuple[str, ...] = ()  # must not appear anywhere
    setup: Callable[[Path], None] | None = None  # writes what the case needs under {d}
    trained_first: bool = False  # main.py trains {d}/md first (before `setup`), so it is not hashed
    skip: str | None = None


MD = "--model_dir={d}/md"
CLI_CASES = [
    # The command line itself is wrong: exit 2, nothing runs, nothing is written.
    Cli("unknown model", ("--model=vgg", MD), 2, ("--model=vgg", "cnn", "resnet")),
    Cli("unknown dataset", ("--dataset=imagenet", MD), 2, ("--dataset=imagenet", "cifar10", "fashion_mnist")),
    Cli("unknown mode", ("--mode=fit", MD), 2, ("--mode=fit", "train_and_evaluate")),
    Cli("unknown flag", ("--trian_steps=5", MD), 2, ("trian_steps",)),
    Cli("zero train steps", ("--train_steps=0", MD), 2, ("--train_steps=0", "positive")),
    Cli("negative train batch", ("--train_batch_size=-8", MD), 2, ("--train_batch_size=-8", "positive")),
    Cli("zero eval batch", ("--eval_batch_size=0", MD), 2, ("--eval_batch_size=0", "positive")),
    Cli("zero iterations per loop", ("--iterations_per_loop=0", MD), 2,
        ("--iterations_per_loop", "got 0", ">= 1")),
    Cli("steps not a number", ("--train_steps=ten", MD), 2, ("--train_steps=ten", "int")),
    Cli("stray positional argument", ("train", MD), 2, ("unexpected arguments train", "--flag=value")),
    Cli("empty --data_dir", ("--data_dir=", "--dataset=fashion_mnist", MD), 2, ("--data_dir is empty",)),
    Cli("--data_dir with synthetic data", ("--data_dir={d}", MD, *SYNTHETIC), 2, ("--data_dir has no effect",)),
    Cli("--plot with a mode that draws nothing", ("--plot=x.png", MD, *SYNTHETIC), 2, ("--plot works with",)),
    # The run fails here: exit 1, one clear line, model_dir as it was.
    Cli("model_dir is a file", ("--model_dir={d}/file", *SYNTHETIC), 1, ("is a file", "folder"),
        setup=lambda d: write_file(d / "file")),
    Cli("model_dir inside a file", ("--model_dir={d}/file/md", *SYNTHETIC), 1, ("cannot be written", "point"),
        setup=lambda d: write_file(d / "file")),
    Cli("model_dir read-only", (MD, *SYNTHETIC), 1, ("cannot be written", "point model_dir"),
        setup=lambda d: (d / "md").mkdir(mode=0o555), skip="root writes anywhere" if AS_ROOT else None),
    Cli("gs:// bucket that does not exist", ("--model_dir=gs://no-such-bucket-e9/run", *SYNTHETIC), 1,
        ("gs://no-such-bucket-e9/run", "bucket gs://no-such-bucket-e9 does not exist", "create it"),
        skip=unavailable_reason()),
    Cli("--use_tpu without a TPU", ("--use_tpu", MD, *SYNTHETIC), 1, ("TPU", "--use_tpu")),
    Cli("--tpu address that does not answer", ("--use_tpu", "--tpu=grpc://127.0.0.1:1", MD, *SYNTHETIC), 1,
        ("127.0.0.1:1",)),
    Cli("evaluate with nothing trained", ("--mode=evaluate", MD, *SYNTHETIC), 1, ("holds no checkpoint", "train first"),
        setup=lambda d: (d / "md").mkdir()),
    Cli("export with nothing trained", ("--mode=export", MD, "--export_dir={d}/export", *SYNTHETIC), 1,
        ("holds no checkpoint",), setup=lambda d: (d / "export").mkdir()),
    Cli("Fashion-MNIST missing from --data_dir", ("--mode=evaluate", "--dataset=fashion_mnist", "--data_dir={d}",
                                                  MD, *TINY), 1, ("not found in --data_dir", "Fix:")),
    Cli("Fashion-MNIST images truncated", ("--mode=evaluate", "--dataset=fashion_mnist", "--data_dir={d}/data",
                                           "--model_dir={d}/trained", *TINY), 1, ("truncated",),
        setup=lambda d: idx_files(d / "data", truncate=True), trained_first=True),
    Cli("Fashion-MNIST file with the wrong magic number", ("--mode=evaluate", "--dataset=fashion_mnist",
                                                           "--data_dir={d}/data", "--model_dir={d}/trained", *TINY),
        1, ("bad magic number 2049",), setup=lambda d: idx_files(d / "data", magic=2049), trained_first=True),
    Cli("Fashion-MNIST label out of range", ("--mode=evaluate", "--dataset=fashion_mnist", "--data_dir={d}/data",
                                             "--model_dir={d}/trained", *TINY), 1, ("label 12 out of range",),
        setup=lambda d: idx_files(d / "data", label=12), trained_first=True),
    Cli("CIFAR-10 missing", ("--model=resnet", "--resnet_depth=8", "--mode=evaluate", "--dataset=cifar10",
                             "--data_dir={d}", MD, *TINY), 1, ("CIFAR-10 test batches not found", "cifar.html"),
        absent=("download=True",)),
    Cli("CIFAR-10 binary batch truncated", ("--model=resnet", "--resnet_depth=8", "--mode=predict",
                                            "--dataset=cifar10", "--data_dir={d}/data", "--model_dir={d}/trained",
                                            *TINY), 1, ("test_batch.bin", "truncated"),
        setup=lambda d: cifar_bin(d / "data", records=1.5), trained_first=True),
    Cli("CIFAR-10 label out of range", ("--model=resnet", "--resnet_depth=8", "--mode=predict", "--dataset=cifar10",
                                        "--data_dir={d}/data", "--model_dir={d}/trained", *TINY), 1,
        ("labels must be integers in 0..9",), setup=lambda d: cifar_bin(d / "data", label=12), trained_first=True),
    Cli("CIFAR-10 pickle that would run code", ("--model=resnet", "--resnet_depth=8", "--mode=predict",
                                                "--dataset=cifar10", "--data_dir={d}/data",
                                                "--model_dir={d}/trained", *TINY), 1,
        ("refusing to unpickle global", "system"), setup=lambda d: cifar_pickle_running_code(d / "data"),
        trained_first=True),
    # Allowed: exit 0, and what happened is said.
    Cli("garbage `checkpoint` state file (allowed: ignored with a warning, as TensorFlow did)",
        ("--mode=evaluate", "--eval_steps=1", "--model_dir={d}/trained", *SYNTHETIC), 0,
        ("unreadable", "evaluate: {"), setup=lambda d: garbage_state_file(d / "trained"), trained_first=True),
    Cli("iterations_per_loop > train_steps (allowed: the loop is cut to train_steps)",
        (MD, *SYNTHETIC, "--iterations_per_loop=50"), 0, ("train: {'global_step': 2}",)),
]


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory) -> dict[str, tuple[dict, Path, dict]]:
    """Runs every CLI row in one helper process (tests/cli_batch.py); name -> (result, folder, digests before)."""
    base = tmp_path_factory.mktemp("cli")
    cases = [c for c in CLI_CASES if c.skip is None]
    models = {_model_flags(c) for c in cases if c.trained_first}  # train each model once, copy it per case
    trained = {flags: base / f"trained{i}" for i, flags in enumerate(sorted(models))}
    if trained:
        _run_batch([[*flags, "--mode=train", f"--model_dir={folder}", *SYNTHETIC] for flags, folder in trained.items()],
                   base / "first", gcs=False)
    digests = {}
    for index, case in enumerate(cases):
        folder = base / str(index)
        folder.mkdir()
        if case.trained_first:
            shutil.copytree(trained[_model_flags(case)], folder / "trained")
        if case.setup:
            case.setup(folder)
        digests[case.name] = {p: folder_digest(folder / p) for p in ("md", "trained", "export", "file")}
    results = _run_batch([[a.format(d=base / str(i)) for a in c.argv] for i, c in enumerate(cases)], base / "cases",
                         gcs=any(c.argv[0].startswith("--model_dir=gs://") for c in cases))
    return {c.name: (r, base / str(i), digests[c.name]) for i, (c, r) in enumerate(zip(cases, results, strict=True))}


def _model_flags(case: Cli) -> tuple[str, ...]:
    return tuple(a for a in case.argv if a.startswith(("--model=", "--resnet_depth")))


def _run_batch(runs: list[list[str]], stem: Path, gcs: bool) -> list[dict]:
    """Runs main.py command lines in one helper process (with the offline GCS emulator when `gcs`)."""
    stem.with_suffix(".json").write_text(json.dumps(runs))
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    emulator = GcsEmulator("estimator-test") if gcs and unavailable_reason() is None else None
    if emulator is not None:
        emulator.start()
        env.update(emulator.env())
    try:
        done = launcher.run([sys.executable, str(ROOT / "tests" / "cli_batch.py"), str(stem.with_suffix(".json")),
                               str(stem.with_suffix(".out.json"))], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
    finally:
        if emulator is not None:
            emulator.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(stem.with_suffix(".out.json").read_text())


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_cli(case: Cli, cli_results):
    if case.skip:
        pytest.skip(case.skip)
    result, folder, before = cli_results[case.name]
    out, err = result["stdout"], result["stderr"]
    assert result["code"] == case.exit, f"exit {result['code']}, expected {case.exit}\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    shown = err if case.exit else out + err
    for word in case.words:
        assert word in shown, f"{word!r} not in:\n{shown[-3000:]}"
    for word in case.absent:
        assert word not in out + err
    if case.exit:
        lines = [line for line in err.splitlines() if line.strip()]
        first = next(i for i, line in enumerate(lines) if line.startswith("error: "))
        assert len(lines) - first <= 2, "the error takes more than two lines:\n" + "\n".join(lines[first:])
        after = {p: folder_digest(folder / p) for p in before}
        assert after == before, "a failing run changed model_dir / export_dir"
    assert not (folder / "data" / "pwned").exists()


def test_cli_without_tensorflow_installed_says_how_to_install_it(tmp_path):
    """`import tensorflow` fails (a stand-in package raising ImportError): one line, exit 1, no traceback."""
    shim = tmp_path / "shim" / "tensorflow"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('No module named tensorflow (test stand-in)')\n")
    env = dict(os.environ, PYTHONPATH=f"{shim.parent}{os.pathsep}{ROOT}")
    done = subprocess.run([sys.executable, "main.py", f"--model_dir={tmp_path / 'md'}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "needs TensorFlow >= 2.16" in done.stderr and "pip install" in done.stderr
    assert not (tmp_path / "md").exists()


def test_cli_usage_error_exits_2_from_a_real_process(tmp_path):
    """The batch helper runs main.run_cli; this checks `python main.py` itself answers the same."""
    done = subprocess.run([sys.executable, "main.py", "--train_steps=0", f"--model_dir={tmp_path / 'md'}"], cwd=ROOT,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: flag --train_steps=0")
    assert not (tmp_path / "md").exists()


# -- the Python API table ----------------------------------------------------------------------------
def _estimator(model_dir: Path, model_fn=m.linear_model_fn, strategy=None, iterations=2, **kwargs) -> TPUEstimator:
    config = RunConfig(model_dir=str(model_dir), train_distribute=strategy,
                       tpu_config=TPUConfig(iterations_per_loop=iterations))
    sizes = dict(train_batch_size=16, eval_batch_size=16, predict_batch_size=16)
    sizes.update(kwargs)
    return TPUEstimator(model_fn, config=config, use_tpu=False, **sizes)


X, Y = m.dataset(64)


def _with_nan(x: np.ndarray, row: int) -> np.ndarray:
    x = x.copy()
    x[row, 0] = np.nan
    return x


def _spec_model_fn(**fields):
    """linear_model_fn whose TPUEstimatorSpec has `fields` replaced (callables get (labels, logits, loss))."""

    def model_fn(features, labels, mode, params):
        logits = m.linear_model()(features)
        if mode == "infer":
            spec, per_example = {"predictions": {"logits": logits}}, None
        else:
            per_example = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
            loss = tf.reduce_mean(per_example)
            spec = {"loss": loss, "train_op": CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss)}
        made = {k: (v(labels, logits, per_example) if callable(v) else v) for k, v in fields.items()}
        spec.update(made)
        return TPUEstimatorSpec(mode, **spec)

    return model_fn


def _cnn_with_float_labels(md: Path) -> None:
    model = model_fns.get_model("cnn")
    estimator = TPUEstimator(model.model_fn, model_dir=str(md), params=dict(model.default_params, train_steps=2),
                             use_tpu=False, train_batch_size=8)
    images = np.zeros((16, 28, 28, 1), np.float32)
    labels = np.full(16, 2.7, np.float32)
    estimator.train(lambda params: tf.data.Dataset.from_tensor_slices((images, labels)).repeat()
                    .batch(params["batch_size"], drop_remainder=True), max_steps=2)


@dataclasses.dataclass(frozen=True)
class Api:
    """`call(model_dir)` does the bad thing; model_dir exists (a trained copy when `trained`)."""

    name: str
    call: Callable[[Path], Any]
    expect: type[BaseException] | None  # None: allowed
    words: tuple[str, ...]  # in the exception's message, or (allowed) in the log
    trained: bool = False
    replicas: int = 1
    skip: str | None = None
    in_model_fn: bool = False  # raised by model_fn itself: autograph's listing points at its line


API_CASES = [
    Api("params not a dict (list of pairs)", lambda md: TPUEstimator(m.linear_model_fn, model_dir=str(md),
                                                                     params=[("lr", 1)], use_tpu=False),
        TypeError, ("params must be a dict", "list")),
    Api("params not a dict (string)", lambda md: TPUEstimator(m.linear_model_fn, model_dir=str(md),
                                                              params="lr=1", use_tpu=False),
        TypeError, ("params must be a dict", "str")),
    Api("model_dir is a file", lambda md: _estimator(md / "file").train(m.train_input_fn(X, Y), max_steps=2),
        ModelDirError, ("is a file", "point model_dir at a folder")),
    Api("model_dir inside a file", lambda md: _estimator(md / "file" / "run").train(m.train_input_fn(X, Y),
                                                                                    max_steps=2),
        ModelDirError, ("cannot be written", "point model_dir")),
    Api("model_dir read-only", lambda md: (md.chmod(0o555), _estimator(md).train(m.train_input_fn(X, Y), max_steps=2)),
        ModelDirError, ("cannot be written",), skip="root writes anywhere" if AS_ROOT else None),
    Api("a number where train()'s hooks go", lambda md: _estimator(md).train(m.train_input_fn(X, Y), 2),
        TypeError, ("train() hooks must be a list", "got int", "max_steps=")),
    Api("zero max_steps", lambda md: _estimator(md).train(m.train_input_fn(X, Y), max_steps=0),
        ValueError, ("max_steps must be a positive integer, got 0",)),
    Api("negative evaluate steps", lambda md: _estimator(md).evaluate(m.eval_input_fn(X, Y), steps=-1),
        ValueError, ("steps must be a positive integer", "-1")),
    Api("zero train batch", lambda md: _estimator(md, train_batch_size=0),
        ValueError, ("train_batch_size must be a positive integer, got 0",)),
    Api("batch that does not divide across 8 replicas",
        lambda md, strategy=None: _estimator(md, strategy=strategy, train_batch_size=12).train(
            m.train_input_fn(X, Y), max_steps=1),
        ValueError, ("train_batch_size=12 does not divide by the 8 replicas",), replicas=8),
    Api("use_tpu without a TPU", lambda md: TPUEstimator(m.linear_model_fn, model_dir=str(md), use_tpu=True,
                                                         train_batch_size=8).train(m.train_input_fn(X, Y),
                                                                                   max_steps=1),
        NoTPUError, ("no TPU devices", "drop --use_tpu")),
    Api("unknown dataset name", lambda md: input_fns.get_dataset("imagenet"),
        ValueError, ("'imagenet'", "cifar10")),
    Api("unknown model name", lambda md: model_fns.get_model("vgg"), ValueError, ("'vgg'", "cnn")),
    Api("misspelt input_fn option (TypeError)", lambda md: input_fns.get_dataset("synthetic").input_fn(
        "train", shufle_buffer=4), TypeError, ("unknown option", "shufle_buffer", "shuffle_buffer")),
    Api("unknown input_fn mode", lambda md: input_fns.get_dataset("synthetic").input_fn("fit"),
        ValueError, ("fit",)),
    Api("input_fn returns a number", lambda md: _estimator(md).train(lambda params: 3, max_steps=2),
        ValueError, ("input_fn must return a tf.data.Dataset", "got int")),
    Api("input_fn yields a 3-tuple", lambda md: _estimator(md).train(
        lambda params: tf.data.Dataset.from_tensor_slices((X, Y, Y)).repeat().batch(16, drop_remainder=True),
        max_steps=2),
        ValueError, ("tuple of 3 items", "(features, labels)")),
    Api("empty eval dataset", lambda md: _estimator(md).evaluate(m.eval_input_fn(X[:0], Y[:0])),
        ValueError, ("no examples", "drop_remainder"), trained=True),
    Api("float labels for the cnn's sparse loss", _cnn_with_float_labels,
        ValueError, ("labels are float32", "integer class ids", "tf.cast(labels, tf.int32)"), in_model_fn=True),
    Api("labels out of range (TensorFlow's own error on CPU)",
        lambda md: _estimator(md).train(m.train_input_fn(X, Y + 5), max_steps=2),
        tf.errors.InvalidArgumentError, ("label value of", "outside the valid range")),
    Api("TRAIN spec without loss", lambda md: _estimator(md, _spec_model_fn(loss=None)).train(
        m.train_input_fn(X, Y), max_steps=2), ValueError, ("no loss in TRAIN mode", "set loss=")),
    Api("PREDICT spec without predictions", lambda md: list(_estimator(md, _spec_model_fn(predictions=None)).predict(
        m.predict_input_fn(X))), ValueError, ("no predictions in PREDICT mode", "set predictions="), trained=True),
    Api("non-scalar loss", lambda md: _estimator(md, _spec_model_fn(loss=lambda labels, logits, per: per)).train(
        m.train_input_fn(X, Y), max_steps=2), ValueError, ("loss must be a scalar", "(16,)")),
    Api("eval_metrics not a (metric_fn, tensors) tuple",
        lambda md: _estimator(md, _spec_model_fn(eval_metrics=lambda labels, logits, per: [labels])).evaluate(
            m.eval_input_fn(X, Y)), ValueError, ("eval_metrics must be a tuple (metric_fn, tensors)",), trained=True),
    Api("metric_fn returns a number, not a metric",
        lambda md: _estimator(md, _spec_model_fn(eval_metrics=lambda labels, logits, per: (
            lambda labels: {"acc": 3.0}, [labels]))).evaluate(m.eval_input_fn(X, Y)),
        ValueError, ("metric_fn's result", "acc"), trained=True),
    Api("NaN loss in training: stops, the last good checkpoint stays latest",
        lambda md: _estimator(md).train(m.train_input_fn(_with_nan(X, 40), Y), max_steps=8),
        NanLossError, ("Loss became nan", "holds finite values: train() resumes from it"), trained=True),
    Api("NaN in eval data (allowed: results returned as tf.estimator did, with a warning)",
        lambda md: _estimator(md).evaluate(m.eval_input_fn(_with_nan(X, 3), Y)),
        ALLOWED, ("non-finite loss=nan", "NaN or Inf"), trained=True),
    Api("garbage `checkpoint` state file (allowed: ignored with a warning, newest checkpoint used)",
        lambda md: (garbage_state_file(md), _estimator(md).evaluate(m.eval_input_fn(X, Y))),
        ALLOWED, ("unreadable",), trained=True),
    Api("iterations_per_loop > max_steps (allowed: stops at max_steps)",
        lambda md: _estimator(md, iterations=50).train(m.train_input_fn(X, Y), max_steps=2).latest_checkpoint(),
        ALLOWED, ()),
]


@pytest.fixture(scope="module")
def trained_linear(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("trained") / "md"
    _estimator(folder).train(m.train_input_fn(X, Y), max_steps=2)
    return folder


def _checkpoint_digest(model_dir: Path) -> dict | None:
    """The folder's digest without event files (a NaN stop still wrote its step summaries)."""
    digest = folder_digest(model_dir)
    return None if digest is None else {k: v for k, v in digest.items() if "tfevents" not in k}


@pytest.mark.parametrize("case", API_CASES, ids=lambda c: c.name)
def test_api(case: Api, tmp_path, trained_linear, request, caplog):
    if case.skip:
        pytest.skip(case.skip)
    md = tmp_path / "md"
    if case.trained:
        shutil.copytree(trained_linear, md)
    else:
        md.mkdir()
    (md / "file").write_text("I am a file")
    call = case.call
    if case.replicas > 1:
        strategy = request.getfixturevalue("eight_replicas")
        call = lambda md: case.call(md, strategy=strategy)  # noqa: E731
    before = _checkpoint_digest(md)
    if case.expect is ALLOWED:
        with caplog.at_level("WARNING", logger="absl"):
            result = call(md)
        for word in case.words:
            assert word in caplog.text
        if "iterations_per_loop" in case.name:
            assert result.endswith("model.ckpt-2")
        if "NaN in eval" in case.name:
            assert math.isnan(result["loss"]) and result["global_step"] == 2
        return
    with pytest.raises(case.expect) as raised:
        call(md)
    message = getattr(raised.value, "message", None) or str(raised.value)
    for word in case.words:
        assert word in message, f"{word!r} not in {message!r}"
    assert case.in_model_fn or "in user code" not in message, "the engine's own check came out as a listing"
    md.chmod(0o755)
    assert _checkpoint_digest(md) == before, "a failing call changed model_dir"


def test_table_has_at_least_30_cases():
    assert len(CLI_CASES) + len(API_CASES) + 2 >= 30


def test_no_file_the_project_reads_can_run_code():
    """No pickle.load / allow_pickle=True / eval / Keras unsafe mode anywhere the project reads files."""
    pattern = re.compile(r"\b(pickle\.loads?|marshal\.loads?|yaml\.load|(?<!\.)eval|exec|torch\.load)\(|"
                         r"allow_pickle\s*=\s*True|safe_mode\s*=\s*False")
    paths = [ROOT / "main.py", *(p for f in ("estimators", "input_fns", "launch", "model_fns")
                                 for p in (ROOT / f).rglob("*.py"))]
    offenders = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in paths
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if pattern.search(line.split("#")[0])]
    reading = [line for line in offenders
               if not (line.startswith(_READS_NO_FILE) and line.endswith("safe_mode=False)"))]
    assert reading == []


# Matches of the rule above that read no file: the Keras flavour rebuilds the program's own in-memory model
# from the config it serialized in this process (a model from a file went through load_model's safe mode).
_READS_NO_FILE = ("estimators/keras/flavours.py:",)
