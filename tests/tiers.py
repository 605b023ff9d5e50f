"""Which tier a test is in: the fast tier (`pytest -m "not slow"`) or only the full suite.

A test is `slow` when what it uses makes it so, read from its module's source and its fixtures:
  replicas8   the 8-replica strategy (eight_replicas): eight copies of every step
  subprocess  its module starts other Pythons, itself or through the helpers that do (worker_process,
              cli_batch, the GCS emulator, launcher): each pays TensorFlow's start-up or a fork
  reference   compares with TensorFlow 2.15's recorded runs (tests/compat, *_215 / tf215 modules, the
              compat_cases / compat_ours / *_215.json references): whole programs, run both ways
  trains      its module runs a model: an estimator's train/evaluate/predict/export, Keras fit, main.py
              (measured on a busy 2-core machine: 2-40 s a test, where the rest take well under one)
`@pytest.mark.slow` marks anything else by hand; `@pytest.mark.smoke` keeps a test that trains in the
fast tier (tests/test_smoke.py: one tiny run of main.py end to end). The fast tier is what is left:
flags, settings, registries, input pipelines, progress, loop sizing, spec checks, checkpoint
bookkeeping, and the smoke run.
Tests that need an optional package get needs_tf_keras / needs_tensorboard, and a skip naming the
install where the package is missing. tf_keras is needed by modules that run with TF_USE_LEGACY_KERAS, and
by those that train canned estimators (their Keras 2 optimizers are tf_keras's) or read 2.15's canned
model_dirs. tests/compat marks its own, per program (tests/compat/test_programs.py), so without tf_keras the
programs that need none still run.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from collections.abc import Callable

TESTS = os.path.dirname(os.path.abspath(__file__))
KINDS = ("replicas8", "subprocess", "reference", "trains")
OPTIONAL = {  # marker -> (package, how to install it)
    "needs_tf_keras": ("tf_keras", 'pip install --no-deps "tf_keras==2.21.*" (README: the legacy extra)'),
    "needs_tensorboard": ("tensorboard", "pip install tensorboard"),
}

_SUBPROCESS = re.compile(r"^\s*(import subprocess|from subprocess |import multiprocessing|from multiprocessing )"
                         r"|\b(worker_processes|worker_process|crash_worker|cli_batch|gcs_emulator|gcs_faults|launcher)\b"
                         r"|\bPopen\(|\bos\.fork\(", re.MULTILINE)
_TRAINS = re.compile(r"\.(train|evaluate|predict|export_saved_model|fit)\(|\b(train_and_evaluate|main\.main|"
                     r"run_main|preflight)\(")
_REFERENCE_MODULE = re.compile(r"(_215|tf215|silent_cases)")
_REFERENCE_USE = re.compile(r"\b(compat_cases|compat_ours)\b|_215\.json")
_CANNED = re.compile(r"\b(Baseline|Linear|DNN\w*)(Classifier|Regressor|Estimator)\(|\bcanned215\b")
_TENSORBOARD_API = re.compile(r"tf\.summary\.(scalar|histogram|image|text|audio)\b")


@functools.cache
def _module_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def marks_for(path: str, fixtures: tuple[str, ...], smoke: bool = False) -> set[str]:
    """The marks a test of module `path` using `fixtures` gets: the kinds above, `slow`, needs_*.

    smoke: the test is marked `smoke`, so training alone does not make it slow.
    """
    marks = set()
    relative = os.path.relpath(path, TESTS)
    in_compat = relative.startswith("compat" + os.sep)
    text = _module_text(path)
    if "eight_replicas" in fixtures:
        marks.add("replicas8")
    if _SUBPROCESS.search(text):
        marks.add("subprocess")
    if in_compat or _REFERENCE_MODULE.search(os.path.basename(path)) or _REFERENCE_USE.search(text):
        marks.add("reference")
    if _TRAINS.search(text):
        marks.add("trains")
    if not in_compat and ("TF_USE_LEGACY_KERAS" in text or _CANNED.search(text)):
        marks.add("needs_tf_keras")
    if _TENSORBOARD_API.search(text):
        marks.add("needs_tensorboard")
    if marks & set(KINDS) - ({"trains"} if smoke else set()):
        marks.add("slow")
    return marks


def installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def missing_package(marks: set[str], is_installed: Callable[[str], bool] = installed) -> str | None:
    """The skip reason of a test with these marks ("tf_keras is not installed: pip install ..."), or None."""
    for marker, (package, install) in OPTIONAL.items():
        if marker in marks and not is_installed(package):
            return f"{package} is not installed: {install}"
    return None
