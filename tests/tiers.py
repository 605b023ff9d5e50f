"""Which tier a test is in: the fast tier (`pytest -m "not slow"`) or only the full suite.

A test is `slow` when what it uses makes it so, found from its module and fixtures:
  replicas8   the 8-replica strategy (eight_replicas): eight copies of every step
  subprocess  its module starts other Pythons (each pays TensorFlow's start-up)
  reference   TensorFlow 2.15's recorded runs (tests/compat, *_215 / tf215 modules): whole programs
or when its last recorded run took longer than SLOW_SECONDS (tests/durations.json, refreshed by
`pytest -m "not slow" --record-durations`: most engine tests train a model, and a second or two
each is what keeps the fast tier under a few minutes). A test not yet recorded is fast.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
from collections.abc import Callable

TESTS = os.path.dirname(os.path.abspath(__file__))
DURATIONS = os.path.join(TESTS, "durations.json")
SLOW_SECONDS = 1.0  # setup + call + teardown, as recorded (on a busy 2-core machine: an idle one is faster)
KINDS = ("replicas8", "subprocess", "reference")

OPTIONAL = {  # marker -> (package, how to install it)
    "needs_tf_keras": ("tf_keras", 'pip install --no-deps "tf_keras==2.21.*" (README: the legacy extra)'),
    "needs_tensorboard": ("tensorboard", "pip install tensorboard"),
}

_SUBPROCESS = re.compile(r"^\s*(import subprocess|from subprocess |import multiprocessing|from multiprocessing )",
                         re.MULTILINE)
_REFERENCE_MODULE = re.compile(r"(_215|tf215|silent_cases)")
_TENSORBOARD_API = re.compile(r"tf\.summary\.(scalar|histogram|image|text|audio)\b")


@functools.cache
def _module_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


@functools.cache
def recorded_durations(path: str = DURATIONS) -> dict[str, float]:
    """node id -> seconds of its last recorded run ({} without a record)."""
    try:
        with open(path, encoding="utf-8") as f:
            return {str(k): float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError):
        return {}


def marks_for(nodeid: str, path: str, fixtures: tuple[str, ...], durations: dict[str, float]) -> set[str]:
    """The marks a test gets: the kinds above, `slow`, and needs_tf_keras / needs_tensorboard."""
    marks = set()
    relative = os.path.relpath(path, TESTS)
    in_compat = relative.startswith("compat" + os.sep)
    text = _module_text(path)
    if "eight_replicas" in fixtures:
        marks.add("replicas8")
    if _SUBPROCESS.search(text):
        marks.add("subprocess")
    if in_compat or _REFERENCE_MODULE.search(os.path.basename(path)):
        marks.add("reference")
    if in_compat or "TF_USE_LEGACY_KERAS" in text:
        marks.add("needs_tf_keras")
    if _TENSORBOARD_API.search(text):
        marks.add("needs_tensorboard")
    if marks & set(KINDS) or durations.get(nodeid, 0.0) > SLOW_SECONDS:
        marks.add("slow")
    return marks


def write_durations(measured: dict[str, float], path: str = DURATIONS) -> None:
    """Merges `measured` (node id -> seconds) into the record, sorted, one test a line."""
    merged = {**recorded_durations(path), **{k: round(v, 3) for k, v in measured.items()}}
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(f"  {json.dumps(k)}: {merged[k]}" for k in sorted(merged)) + "\n}\n")
    recorded_durations.cache_clear()


def installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def missing_package(marks: set[str], is_installed: Callable[[str], bool] = installed) -> str | None:
    """The skip reason of a test with these marks ("tf_keras is not installed: pip install ..."), or None."""
    for marker, (package, install) in OPTIONAL.items():
        if marker in marks and not is_installed(package):
            return f"{package} is not installed: {install}"
    return None
