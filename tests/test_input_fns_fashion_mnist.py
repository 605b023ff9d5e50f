"""Fashion-MNIST IDX loading and lookup, on tiny generated files (never the network)."""

import gzip
import os
import struct

import keras
import numpy as np
import pytest

import input_fns
from input_fns import fashion_mnist

TRAIN_N, TEST_N = 5, 3


@pytest.fixture(autouse=True)
def _no_download(monkeypatch):
    """No test may reach the network, whatever the lookup finds."""
    monkeypatch.setattr(fashion_mnist, "DOWNLOAD", False)


def _idx_bytes(magic: int, dims: tuple[int, ...], payload: bytes) -> bytes:
    return struct.pack(f">i{len(dims)}i", magic, *dims) + payload


def _write(path, data: bytes) -> None:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(data)


def _write_split(directory, prefix: str, n: int, suffix: str = ".gz") -> None:
    images = (np.arange(n * 28 * 28) % 251).astype(np.uint8).tobytes()
    labels = (np.arange(n) % 10).astype(np.uint8).tobytes()
    _write(
        directory / f"{prefix}-images-idx3-ubyte{suffix}",
        _idx_bytes(2051, (n, 28, 28), images),
    )
    _write(
        directory / f"{prefix}-labels-idx1-ubyte{suffix}",
        _idx_bytes(2049, (n,), labels),
    )


@pytest.fixture
def data_dir(tmp_path):
    _write_split(tmp_path, "train", TRAIN_N)
    _write_split(tmp_path, "t10k", TEST_N)
    return tmp_path


def _load(split: str, directory) -> tuple[np.ndarray, np.ndarray]:
    return fashion_mnist.load(split, str(directory), search_dirs=[])


def test_gzipped_idx_loads_as_uint8_nhwc_and_int32_labels(data_dir):
    images, labels = _load("train", data_dir)
    assert images.shape == (TRAIN_N, 28, 28, 1) and images.dtype == np.uint8
    assert labels.dtype == np.int32 and list(labels) == [0, 1, 2, 3, 4]
    assert images[0, 0, 5, 0] == 5 and images[0, 1, 0, 0] == 28  # row-major pixels


def test_test_split_reads_t10k_files(data_dir):
    images, labels = _load("test", data_dir)
    assert images.shape[0] == labels.shape[0] == TEST_N


def test_uncompressed_idx_loads(tmp_path):
    _write_split(tmp_path, "t10k", TEST_N, suffix="")
    assert _load("test", tmp_path)[0].shape == (TEST_N, 28, 28, 1)


def test_fashion_mnist_subdir_of_data_dir_is_found(tmp_path):
    (tmp_path / "fashion-mnist").mkdir()
    _write_split(tmp_path / "fashion-mnist", "t10k", TEST_N)
    assert len(_load("test", tmp_path)[1]) == TEST_N


def test_data_dir_is_searched_before_search_dirs(tmp_path, data_dir):
    other = tmp_path / "other"
    other.mkdir()
    _write_split(other, "t10k", 7)
    _, labels = fashion_mnist.load("test", str(data_dir), search_dirs=[str(other)])
    assert len(labels) == TEST_N


def test_search_dirs_are_used_without_data_dir(data_dir):
    _, labels = fashion_mnist.load("test", None, search_dirs=["/nonexistent", str(data_dir)])
    assert len(labels) == TEST_N


def test_truncated_images_file_is_rejected_naming_file(data_dir):
    path = data_dir / "t10k-images-idx3-ubyte.gz"
    _write(path, _idx_bytes(2051, (TEST_N, 28, 28), bytes(TEST_N * 784 - 10)))
    with pytest.raises(ValueError, match=r"t10k-images-idx3-ubyte\.gz: file truncated"):
        _load("test", data_dir)


def test_truncated_gzip_stream_is_rejected_naming_file(data_dir):
    path = data_dir / "t10k-labels-idx1-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-12])
    with pytest.raises(ValueError, match=r"t10k-labels-idx1-ubyte\.gz: cannot decompress"):
        _load("test", data_dir)


def test_wrong_magic_is_rejected(data_dir):
    # A labels file where the images file should be.
    _write(
        data_dir / "t10k-images-idx3-ubyte.gz",
        _idx_bytes(2049, (TEST_N,), bytes(TEST_N)),
    )
    with pytest.raises(ValueError, match="bad magic number 2049, expected 2051"):
        _load("test", data_dir)


def test_wrong_image_size_is_rejected(data_dir):
    _write(
        data_dir / "t10k-images-idx3-ubyte.gz",
        _idx_bytes(2051, (TEST_N, 32, 32), bytes(TEST_N * 1024)),
    )
    with pytest.raises(ValueError, match="images are 32x32, expected 28x28"):
        _load("test", data_dir)


def test_label_count_mismatch_is_rejected(data_dir):
    _write(
        data_dir / "t10k-labels-idx1-ubyte.gz",
        _idx_bytes(2049, (TEST_N + 1,), bytes(TEST_N + 1)),
    )
    with pytest.raises(ValueError, match=f"{TEST_N} images but .* has {TEST_N + 1} labels"):
        _load("test", data_dir)


def test_label_out_of_range_is_rejected(data_dir):
    _write(
        data_dir / "t10k-labels-idx1-ubyte.gz",
        _idx_bytes(2049, (TEST_N,), bytes([0, 10, 1])),
    )
    with pytest.raises(ValueError, match="label 10 out of range"):
        _load("test", data_dir)


def test_missing_files_offline_error_names_the_three_fixes(tmp_path):
    with pytest.raises(input_fns.DatasetNotFoundError) as err:
        _load("train", tmp_path)
    message = str(err.value)
    assert str(tmp_path) in message and "train-images-idx3-ubyte" in message
    assert "--data_dir=" in message
    assert "apt-get install dataset-fashion-mnist" in message
    assert "Keras cache" in message


def test_failed_download_gives_the_same_clear_error(tmp_path, monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("URL fetch failure: no network")

    monkeypatch.setattr(keras.utils, "get_file", offline)
    with pytest.raises(input_fns.DatasetNotFoundError, match=r"(?s)apt-get install.*no network"):
        fashion_mnist.load("train", str(tmp_path), search_dirs=[], download=True)


def test_registered_source_input_fn_reads_data_dir(data_dir):
    fn = input_fns.get_dataset("fashion_mnist").input_fn("eval", str(data_dir), search_dirs=[])
    batches = list(fn({"batch_size": 2}).as_numpy_iterator())
    assert [len(labels) for _, labels in batches] == [2, 1]
    assert batches[0][0].shape == (2, 28, 28, 1)


REAL_DIR = fashion_mnist.SYSTEM_DIR
real_data = pytest.mark.skipif(
    not os.path.isfile(os.path.join(REAL_DIR, "train-labels-idx1-ubyte.gz")),
    reason="real Fashion-MNIST not installed",
)


@real_data
def test_real_train_split_has_60000_examples_starting_with_ankle_boot():
    images, labels = fashion_mnist.load("train", search_dirs=[REAL_DIR])
    assert images.shape == (60000, 28, 28, 1) and labels.shape == (60000,)
    assert labels[0] == 9 and fashion_mnist.CLASS_NAMES[9] == "Ankle boot"


@real_data
def test_real_test_split_has_10000_examples():
    images, labels = fashion_mnist.load("test", search_dirs=[REAL_DIR])
    assert images.shape == (10000, 28, 28, 1)
    assert list(labels[:5]) == [9, 2, 1, 1, 6]
    assert np.bincount(labels).tolist() == [1000] * 10
