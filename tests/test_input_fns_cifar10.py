"""CIFAR-10 loading from the binary and python versions, on tiny generated batches."""

import os
import pickle

import keras
import numpy as np
import pytest
import tensorflow as tf

import input_fns
from input_fns import augment, cifar10, safe_pickle

PER_TRAIN_BATCH, TEST_N = 2, 3


def _images(n: int, start: int) -> np.ndarray:
    """HWC uint8 images whose channels hold distinct values, so a CHW/HWC mix-up shows."""
    hwc = np.zeros((n, 32, 32, 3), np.uint8)
    for c in range(3):
        hwc[..., c] = start + np.arange(n)[:, None, None] * 3 + c
    hwc[:, 0, 1, 0] = 200  # one off-diagonal pixel to pin row/column order
    return hwc


def _chw_rows(images: np.ndarray) -> np.ndarray:
    return images.transpose(0, 3, 1, 2).reshape(len(images), -1)


def _write_bin(path, images: np.ndarray, labels: list[int]) -> None:
    records = np.concatenate([np.array(labels, np.uint8)[:, None], _chw_rows(images)], axis=1)
    path.write_bytes(records.tobytes())


def _write_py(path, images: np.ndarray, labels: list[int]) -> None:
    batch = {
        b"batch_label": b"generated batch",
        b"labels": labels,
        b"data": _chw_rows(images),
        b"filenames": [b"img%d.png" % i for i in range(len(labels))],
    }
    path.write_bytes(pickle.dumps(batch))


def _write_all(directory, fmt: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    write, ext = (_write_bin, ".bin") if fmt == "bin" else (_write_py, "")
    for i in range(1, 6):
        write(
            directory / f"data_batch_{i}{ext}",
            _images(PER_TRAIN_BATCH, 10 * i),
            [i, 9 - i],
        )
    write(directory / f"test_batch{ext}", _images(TEST_N, 100), [0, 9, 3])


def _load(split: str, directory) -> tuple[np.ndarray, np.ndarray]:
    return cifar10.load(split, str(directory), search_dirs=[])


@pytest.mark.parametrize("fmt", ["bin", "py"])
def test_batches_load_as_hwc_uint8_with_int32_labels(tmp_path, fmt):
    _write_all(tmp_path, fmt)
    images, labels = _load("test", tmp_path)
    np.testing.assert_array_equal(images, _images(TEST_N, 100))
    assert images.dtype == np.uint8 and labels.dtype == np.int32
    assert list(labels) == [0, 9, 3]


@pytest.mark.parametrize("fmt", ["bin", "py"])
def test_train_split_concatenates_five_batches_in_order(tmp_path, fmt):
    _write_all(tmp_path, fmt)
    images, labels = _load("train", tmp_path)
    assert images.shape == (5 * PER_TRAIN_BATCH, 32, 32, 3)
    assert list(labels) == [1, 8, 2, 7, 3, 6, 4, 5, 5, 4]


@pytest.mark.parametrize("fmt,subdir", [("bin", "cifar-10-batches-bin"), ("py", "cifar-10-batches-py")])
def test_official_subdir_of_data_dir_is_found(tmp_path, fmt, subdir):
    _write_all(tmp_path / subdir, fmt)
    assert len(_load("test", tmp_path)[1]) == TEST_N


def test_binary_file_not_multiple_of_record_size_is_rejected(tmp_path):
    _write_all(tmp_path, "bin")
    path = tmp_path / "test_batch.bin"
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(
        ValueError,
        match=r"test_batch\.bin: 9218 bytes is not a positive multiple of the 3073",
    ):
        _load("test", tmp_path)


def test_binary_label_out_of_range_is_rejected(tmp_path):
    _write_all(tmp_path, "bin")
    _write_bin(tmp_path / "test_batch.bin", _images(1, 0), [10])
    with pytest.raises(ValueError, match=r"test_batch\.bin: labels must be integers in 0\.\.9"):
        _load("test", tmp_path)


def test_python_label_count_mismatch_is_rejected(tmp_path):
    _write_all(tmp_path, "py")
    batch = {b"data": _chw_rows(_images(2, 0)), b"labels": [1, 2, 3]}
    (tmp_path / "test_batch").write_bytes(pickle.dumps(batch))
    with pytest.raises(ValueError, match="2 images but labels have shape"):
        _load("test", tmp_path)


def test_python_batch_without_data_key_is_rejected(tmp_path):
    _write_all(tmp_path, "py")
    (tmp_path / "test_batch").write_bytes(pickle.dumps({b"labels": [1]}))
    with pytest.raises(ValueError, match="lacks 'data'"):
        _load("test", tmp_path)


def test_truncated_pickle_is_rejected_naming_file(tmp_path):
    _write_all(tmp_path, "py")
    path = tmp_path / "test_batch"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="test_batch: cannot unpickle"):
        _load("test", tmp_path)


class _Exploit:
    """Pickles to a call of os.system, as a hostile 'dataset' file would."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_malicious_pickle_is_refused_and_not_executed(tmp_path):
    _write_all(tmp_path, "py")
    marker = tmp_path / "pwned"
    (tmp_path / "test_batch").write_bytes(pickle.dumps({b"data": _Exploit(str(marker)), b"labels": [0]}))
    with pytest.raises(
        safe_pickle.UnsafePickleError,
        match=r"test_batch: refusing to unpickle global \w+\.system",
    ):
        _load("test", tmp_path)
    assert not marker.exists()


def test_safe_unpickler_refuses_builtins_eval():
    with pytest.raises(safe_pickle.UnsafePickleError, match="builtins.eval"):
        safe_pickle.loads(pickle.dumps(eval))


def test_missing_batches_error_lists_what_was_looked_for(tmp_path):
    with pytest.raises(input_fns.DatasetNotFoundError) as err:
        _load("test", tmp_path)
    message = str(err.value)
    assert "test_batch.bin" in message and "'test_batch'" in message
    assert str(tmp_path / "cifar-10-batches-py") in message and "--data_dir=" in message


def test_no_download_is_attempted_unless_asked(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(keras.utils, "get_file", lambda *a, **k: calls.append(a))
    with pytest.raises(input_fns.DatasetNotFoundError):
        _load("test", tmp_path)
    assert calls == []


def test_download_when_asked_reads_the_extracted_python_batches(tmp_path, monkeypatch):
    def fake_get_file(fname, origin, extract, cache_dir, cache_subdir):
        extracted = tmp_path / "cache" / fname
        _write_all(extracted / "cifar-10-batches-py", "py")
        return str(extracted)

    monkeypatch.setattr(keras.utils, "get_file", fake_get_file)
    _, labels = cifar10.load("test", None, search_dirs=[], download=True)
    assert list(labels) == [0, 9, 3]


def test_augmentation_keeps_shape_and_uint8():
    image = tf.constant(_images(1, 0)[0])
    out = augment.pad_crop_flip(image, tf.constant([1, 2], tf.int64))
    assert out.shape == (32, 32, 3) and out.dtype == tf.uint8


def test_augmentation_varies_with_seed():
    image = tf.constant(np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8))
    outs = {augment.pad_crop_flip(image, tf.constant([s, 0], tf.int64)).numpy().tobytes() for s in range(8)}
    assert len(outs) > 1


def test_train_input_fn_augments_with_static_uint8_batches(tmp_path):
    _write_all(tmp_path, "bin")
    fn = input_fns.get_dataset("cifar10").input_fn("train", str(tmp_path), search_dirs=[], seed=0)
    ds = fn({"batch_size": 4})
    assert ds.element_spec[0].shape == (4, 32, 32, 3) and ds.element_spec[0].dtype == tf.uint8
    images, labels = next(ds.as_numpy_iterator())
    assert images.shape == (4, 32, 32, 3) and labels.shape == (4,)


def test_eval_input_fn_does_not_augment(tmp_path):
    _write_all(tmp_path, "bin")
    fn = input_fns.get_dataset("cifar10").input_fn("eval", str(tmp_path), search_dirs=[])
    images, _ = next(fn({"batch_size": TEST_N}).as_numpy_iterator())
    np.testing.assert_array_equal(images, _images(TEST_N, 100))
