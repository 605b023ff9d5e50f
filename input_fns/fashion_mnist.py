"""Fashion-MNIST from IDX files: find them (data_dir, system package, Keras cache, download) and load.

Search dirs and downloading are module attributes / arguments so tests never touch the network.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from input_fns import files, idx
from input_fns.errors import DatasetNotFoundError
from input_fns.keras_cache import keras_home
from input_fns.registry import register
from input_fns.source import DatasetSource

NAME = "fashion_mnist"
CLASS_NAMES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)  # fmt: skip
# Examples in each split of the real dataset: an IDX header declaring more is refused before its body is read.
SPLIT_SIZES = {"train": 60000, "test": 10000}
SYSTEM_DIR = "/usr/share/datasets/fashion-mnist"
ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
KERAS_SUBDIR = os.path.join("datasets", "fashion-mnist")
# Set to False (or pass download=False) to forbid network access.
DOWNLOAD = True


def keras_cache_dir() -> str:
    """Where keras.utils.get_file caches Fashion-MNIST (honours $KERAS_HOME)."""
    return os.path.join(keras_home(), KERAS_SUBDIR)


def default_search_dirs() -> list[str]:
    """Directories tried after data_dir: the apt package, then the Keras cache."""
    return [SYSTEM_DIR, keras_cache_dir()]


def file_names(split: str) -> tuple[str, str]:
    """Uncompressed (images, labels) file names for split "train" or "test"."""
    prefix = {"train": "train", "test": "t10k"}[split]
    return f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"


def find_files(
    split: str, data_dir: str | None = None, search_dirs: Sequence[str] | None = None
) -> tuple[str, str] | None:
    """First directory holding both files of `split` (.gz or plain) -> their paths; None if nowhere."""
    for directory in _candidate_dirs(data_dir, search_dirs):
        paths = [_existing(os.path.join(directory, name)) for name in file_names(split)]
        if all(paths):
            return paths[0], paths[1]
    return None


def load(
    split: str,
    data_dir: str | None = None,
    *,
    search_dirs: Sequence[str] | None = None,
    download: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return (uint8 [N,28,28,1], int32 [N]) for "train" (60000) or "test" (10000).

    Looks in data_dir (and its fashion-mnist subdir) when given, else in search_dirs (default: the
    system package, then the Keras cache); downloads only when download=True, or with download=None
    when no data_dir is given and the module's DOWNLOAD allows it.
    """
    paths = find_files(split, data_dir, search_dirs)
    if paths is None:
        tried = _candidate_dirs(data_dir, search_dirs)
        if not _may_download(data_dir, download):
            raise DatasetNotFoundError(_missing_message(split, tried, data_dir))
        paths = _download(split, tried, data_dir)
    limit = SPLIT_SIZES[split]
    images, labels = idx.read_images(paths[0], max_count=limit), idx.read_labels(paths[1], max_count=limit)
    if len(images) != len(labels):
        raise ValueError(f"{paths[0]} has {len(images)} images but {paths[1]} has {len(labels)} labels.")
    if labels.size and labels.max() >= len(CLASS_NAMES):
        raise ValueError(f"{paths[1]}: label {labels.max()} out of range 0..{len(CLASS_NAMES) - 1}.")
    return images, labels


def locate(split: str, data_dir: str | None = None) -> tuple[str, ...]:
    """The files load() reads for `split`; () when it would download them; DatasetNotFoundError otherwise."""
    paths = find_files(split, data_dir)
    if paths is not None:
        return paths
    if _may_download(data_dir, None):
        return ()
    raise DatasetNotFoundError(_missing_message(split, _candidate_dirs(data_dir, None), data_dir))


@register(NAME)
def _source() -> DatasetSource:
    return DatasetSource(NAME, (28, 28, 1), len(CLASS_NAMES), CLASS_NAMES, loader=load, locate=locate)


def _may_download(data_dir: str | None, download: bool | None) -> bool:
    # A given data_dir that lacks the files is an error, not a reason to fetch them elsewhere.
    return download if download is not None else (DOWNLOAD and not data_dir)


def _download(split: str, tried: list[str], data_dir: str | None) -> tuple[str, str]:
    """Fetch the split's two .gz files into the Keras cache; any failure becomes one clear error."""
    import keras  # Deferred: only needed on this rare path.

    try:
        got = [
            keras.utils.get_file(
                name + ".gz",
                origin=ORIGIN + name + ".gz",
                cache_dir=keras_home(),
                cache_subdir=KERAS_SUBDIR,
            )
            for name in file_names(split)
        ]
    except Exception as e:
        raise DatasetNotFoundError(
            f"{_missing_message(split, tried, data_dir)}\nDownload from {ORIGIN} failed: {e}"
        ) from e
    return got[0], got[1]


def _missing_message(split: str, tried: list[str], data_dir: str | None = None) -> str:
    """Two lines: what is missing where, then the ways to fix it."""
    names = " and ".join(f"{n}[.gz]" for n in file_names(split))
    if data_dir:
        return (
            f"Fashion-MNIST {split} files ({names}) not found in --data_dir={data_dir} "
            f"(looked in: {', '.join(tried)}).\n"
            "Fix: pass --data_dir=/path/to/dir holding the IDX files, or leave --data_dir out to use "
            f"{SYSTEM_DIR} (sudo apt-get install dataset-fashion-mnist) or the Keras cache ({keras_cache_dir()}), "
            "downloading there when online."
        )
    return (
        f"Fashion-MNIST {split} files ({names}) not found in: {', '.join(tried)}.\n"
        "Fix: pass --data_dir=/path/to/dir holding the IDX files, or sudo apt-get install dataset-fashion-mnist "
        f"(installs them into {SYSTEM_DIR}), or run once with internet access to fill the Keras cache "
        f"({keras_cache_dir()})."
    )


def _candidate_dirs(data_dir: str | None, search_dirs: Sequence[str] | None) -> list[str]:
    """data_dir and its fashion-mnist subdir when given (nowhere else), else the search dirs."""
    if data_dir:
        return [data_dir, os.path.join(data_dir, "fashion-mnist")]
    return list(default_search_dirs() if search_dirs is None else search_dirs)


def _existing(path: str) -> str | None:
    """path + ".gz" if present, else path if present, else None."""
    for candidate in (path + ".gz", path):
        if files.is_file(candidate):
            return candidate
    return None
