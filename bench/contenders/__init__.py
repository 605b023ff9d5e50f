"""The contenders: each module has `run(job, workload, clock) -> dict` and trains in this process.

Imported lazily by the worker, so a child loads only the contender it measures.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

MODULES = {"ours": "ours", "hand": "hand", "keras_fit": "keras_fit", "input_fn": "input_pipeline"}


def runner(name: str) -> Callable:
    """The `run` function of contender `name`."""
    if name not in MODULES:
        raise ValueError(f"unknown contender {name!r}; choose from {sorted(MODULES)}")
    return importlib.import_module(f"bench.contenders.{MODULES[name]}").run
