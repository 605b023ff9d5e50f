"""Which exports to delete: filters over export folders named by their version (tf.estimator 2.15's gc helpers).

A filter takes a list of `Path(path, export_version)` and returns the ones to keep, sorted;
`garbage_collect_exports` (train_eval/exporters.py) deletes `negation(largest_export_versions(n))` of the
10-digit timestamp folders under an export base.
"""

from __future__ import annotations

import collections
import math
import os
from collections.abc import Callable

import tensorflow as tf
from tensorflow.python.platform import gfile  # ListDirectory looked up per call, as 2.15 did (tests patch it)

Path = collections.namedtuple("Path", "path export_version")
Filter = Callable[[list], list]


def _versioned(paths: list) -> list:
    return [p for p in paths if p.export_version is not None]


def largest_export_versions(n: int) -> Filter:
    """Keeps the `n` paths with the largest export versions (version 0 included)."""

    def keep(paths: list) -> list:
        return sorted(sorted(_versioned(paths), key=lambda p: p.export_version)[-n:] if n > 0 else [])

    return keep


def one_of_every_n_export_versions(n: int) -> Filter:
    """Keeps the largest version of each interval [0, n], (n, 2n], (2n, 3n], ..."""

    def keep(paths: list) -> list:
        best: dict[int, Path] = {}
        for p in _versioned(paths):
            interval = math.floor((p.export_version - 1) / n) if p.export_version else 0
            if interval not in best or best[interval].export_version < p.export_version:
                best[interval] = p
        return sorted(best.values())

    return keep


def mod_export_version(n: int) -> Filter:
    """Keeps the paths whose export version is a multiple of `n`."""

    def keep(paths: list) -> list:
        return sorted(p for p in _versioned(paths) if p.export_version % n == 0)

    return keep


def union(left: Filter, right: Filter) -> Filter:
    """Keeps what either filter keeps."""

    def keep(paths: list) -> list:
        return sorted(set(left(paths)) | set(right(paths)))

    return keep


def negation(kept: Filter) -> Filter:
    """Keeps what `kept` does not keep (the paths to delete)."""

    def keep(paths: list) -> list:
        return sorted(set(paths) - set(kept(paths)))

    return keep


def get_paths(base_dir: str | bytes, parser: Callable[[Path], Path | None]) -> list:
    """The entries of base_dir as Paths, each given its export version by `parser` (None drops an entry)."""
    base_dir = tf.compat.as_str_any(base_dir)
    paths = []
    for entry in gfile.ListDirectory(base_dir):
        name = tf.compat.as_str_any(entry).rstrip("/")  # GCS lists folders with a trailing slash
        parsed = parser(Path(os.path.join(base_dir, name), None))
        if parsed is not None:
            paths.append(parsed)
    return sorted(paths)


# tf.estimator 2.15's names (its gc module kept them private).
_largest_export_versions = largest_export_versions
_one_of_every_n_export_versions = one_of_every_n_export_versions
_mod_export_version = mod_export_version
_union = union
_negation = negation
_get_paths = get_paths
