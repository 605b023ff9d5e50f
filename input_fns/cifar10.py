"""CIFAR-10 from the official binary or python-pickle batches, validated, with no implicit download."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from input_fns import augment, files, safe_pickle
from input_fns.errors import DatasetNotFoundError
from input_fns.keras_cache import keras_home
from input_fns.registry import register
from input_fns.source import DatasetSource

NAME = "cifar10"
CLASS_NAMES = (
    "airplane", "automobile", "bird", "cat", "deer",
    "dog", "frog", "horse", "ship", "truck",
)  # fmt: skip
IMAGE_SHAPE = (32, 32, 3)
RECORD_BYTES = 1 + 32 * 32 * 3  # label byte + CHW pixels
SUBDIRS = ("", "cifar-10-batches-bin", "cifar-10-batches-py")
PYTHON_ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
_KERAS_FNAME = "cifar-10-batches-py-target"  # where keras.datasets.cifar10 extracts to


def file_names(split: str, fmt: str) -> list[str]:
    """Batch file names of `split` ("train"/"test") in format "bin" or "py"."""
    stems = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    return [s + ".bin" for s in stems] if fmt == "bin" else stems


def default_search_dirs() -> list[str]:
    """Keras cache locations (old and new keras.datasets.cifar10 layouts)."""
    datasets = os.path.join(keras_home(), "datasets")
    return [datasets, os.path.join(datasets, _KERAS_FNAME)]


def find_files(
    split: str, data_dir: str | None = None, search_dirs: Sequence[str] | None = None
) -> tuple[str, list[str]] | None:
    """(format, paths) for the first directory holding every batch of `split`; None if nowhere."""
    for directory in _candidate_dirs(data_dir, search_dirs):
        for fmt in ("bin", "py"):
            paths = [os.path.join(directory, n) for n in file_names(split, fmt)]
            if all(files.is_file(p) for p in paths):
                return fmt, paths
    return None


def load(
    split: str,
    data_dir: str | None = None,
    *,
    search_dirs: Sequence[str] | None = None,
    download: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Return (uint8 [N,32,32,3], int32 [N]); downloads the python version only if download=True.

    Looks in data_dir when given (a wrong one is an error, not a reason to look elsewhere), else
    in search_dirs (default: the Keras cache).
    """
    found = find_files(split, data_dir, search_dirs)
    if found is None and download:
        found = find_files(split, None, [_download()])
    if found is None:
        raise DatasetNotFoundError(_missing_message(split, _candidate_dirs(data_dir, search_dirs)))
    fmt, paths = found
    reader = read_binary if fmt == "bin" else read_python
    parts = [reader(p) for p in paths]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def read_binary(path: str) -> tuple[np.ndarray, np.ndarray]:
    """One *.bin batch: records of 1 label byte + 3072 CHW pixel bytes."""
    raw = np.frombuffer(files.read_bytes(path), dtype=np.uint8)
    if raw.size == 0 or raw.size % RECORD_BYTES:
        raise ValueError(
            f"{path}: {raw.size} bytes is not a positive multiple of the {RECORD_BYTES}-byte "
            "CIFAR-10 record (truncated or not a CIFAR-10 binary batch)."
        )
    records = raw.reshape(-1, RECORD_BYTES)
    return _to_hwc(records[:, 1:]), _checked_labels(path, records[:, 0])


def read_python(path: str) -> tuple[np.ndarray, np.ndarray]:
    """One python-version batch: a pickled dict with b"data" uint8 [N,3072] and b"labels"."""
    raw = files.read_bytes(path)
    try:
        batch = safe_pickle.loads(raw)
    except safe_pickle.UnsafePickleError as e:
        raise safe_pickle.UnsafePickleError(f"{path}: {e}") from None
    except Exception as e:  # garbage input can fail in many ways; all mean "not a batch"
        raise ValueError(f"{path}: cannot unpickle a CIFAR-10 batch ({type(e).__name__}: {e}).") from e
    if not isinstance(batch, dict):
        raise ValueError(f"{path}: expected a pickled dict, got {type(batch).__name__}.")
    data, labels = _field(batch, "data"), _field(batch, "labels")
    if data is None or labels is None:
        raise ValueError(f"{path}: batch dict lacks 'data' and/or 'labels' (keys: {sorted(map(str, batch))}).")
    data = np.asarray(data)
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != RECORD_BYTES - 1:
        raise ValueError(f"{path}: 'data' is {data.dtype} {data.shape}, expected uint8 [N, {RECORD_BYTES - 1}].")
    labels = np.asarray(labels)
    if labels.shape != (len(data),):
        raise ValueError(f"{path}: {len(data)} images but labels have shape {labels.shape}.")
    return _to_hwc(data), _checked_labels(path, labels)


def locate(split: str, data_dir: str | None = None) -> tuple[str, ...]:
    """The batch files load() reads for `split`; DatasetNotFoundError naming where it looked otherwise."""
    found = find_files(split, data_dir)
    if found is None:
        raise DatasetNotFoundError(_missing_message(split, _candidate_dirs(data_dir, None)))
    return tuple(found[1])


@register(NAME)
def _source() -> DatasetSource:
    return DatasetSource(
        NAME,
        IMAGE_SHAPE,
        len(CLASS_NAMES),
        CLASS_NAMES,
        loader=load,
        augment=augment.pad_crop_flip,
        locate=locate,
    )


def _to_hwc(rows: np.ndarray) -> np.ndarray:
    return rows.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()


def _checked_labels(path: str, labels: np.ndarray) -> np.ndarray:
    if labels.size == 0:
        raise ValueError(f"{path}: batch holds no records.")
    if not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0 or labels.max() >= len(CLASS_NAMES):
        raise ValueError(f"{path}: labels must be integers in 0..{len(CLASS_NAMES) - 1}.")
    return labels.astype(np.int32)


def _field(batch: dict, key: str) -> object:
    """Value of `key` whether the pickle stored it as bytes (Python 2 files) or str."""
    return batch.get(key.encode(), batch.get(key))


def _download() -> str:
    """Fetch and extract the python version into the Keras cache; return the dir holding the batches."""
    import keras  # Deferred: only needed when explicitly asked to download.

    try:
        path = keras.utils.get_file(
            _KERAS_FNAME,
            origin=PYTHON_ORIGIN,
            extract=True,
            cache_dir=keras_home(),
            cache_subdir="datasets",
        )
    except Exception as e:  # network errors come in many types; all mean the same here.
        raise DatasetNotFoundError(f"CIFAR-10 download from {PYTHON_ORIGIN} failed: {e}") from e
    return os.path.join(path, "cifar-10-batches-py")


def _missing_message(split: str, tried: list[str]) -> str:
    return (
        f"CIFAR-10 {split} batches not found. Looked for {file_names(split, 'bin')} "
        f"or {file_names(split, 'py')} in: {', '.join(tried)}.\n"
        "Pass --data_dir=/path/to (a dir holding the batches or a cifar-10-batches-bin / "
        "cifar-10-batches-py subdir): download cifar-10-binary.tar.gz or cifar-10-python.tar.gz from "
        "https://www.cs.toronto.edu/~kriz/cifar.html and unpack it there."
    )


def _candidate_dirs(data_dir: str | None, search_dirs: Sequence[str] | None) -> list[str]:
    """data_dir and its official subdirs when given (nowhere else), else the search dirs."""
    roots = [data_dir] if data_dir else list(default_search_dirs() if search_dirs is None else search_dirs)
    return [os.path.join(root, sub) if sub else root for root in roots for sub in SUBDIRS]
