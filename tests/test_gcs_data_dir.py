"""--data_dir=gs://...: the Fashion-MNIST and CIFAR-10 loaders find and read their files on GCS as in a folder.

Offline: tests/gcs_emulator.py answers for GCS on 127.0.0.1; the loaders run in a fresh process, which reads the
emulator's environment when TensorFlow loads its GCS filesystem.
"""

from __future__ import annotations

import pytest

from tests.gcs_emulator import GcsEmulator, unavailable_reason

BUCKET = "data-test"

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")

# Writes small files in the real formats to gs://, loads them through the loaders, prints what came back.
_SCRIPT = r'''
import gzip, json, struct, sys
import numpy as np
import tensorflow as tf
from input_fns import cifar10, fashion_mnist

root = sys.argv[1]
rng = np.random.default_rng(0)
images = rng.integers(0, 256, (6, 28, 28), dtype=np.uint8)
labels = rng.integers(0, 10, 6, dtype=np.uint8)
tf.io.gfile.makedirs(root + "/fm")
with tf.io.gfile.GFile(root + "/fm/t10k-images-idx3-ubyte.gz", "wb") as f:
    f.write(gzip.compress(struct.pack(">iiii", 2051, 6, 28, 28) + images.tobytes()))
with tf.io.gfile.GFile(root + "/fm/t10k-labels-idx1-ubyte.gz", "wb") as f:
    f.write(gzip.compress(struct.pack(">ii", 2049, 6) + labels.tobytes()))
fm_x, fm_y = fashion_mnist.load("test", data_dir=root + "/fm", download=False)

pixels = rng.integers(0, 256, (4, 3, 32, 32), dtype=np.uint8)  # CHW, as the binary batches store them
classes = rng.integers(0, 10, 4, dtype=np.uint8)
records = np.concatenate([classes[:, None], pixels.reshape(4, -1)], axis=1)
tf.io.gfile.makedirs(root + "/cifar")
with tf.io.gfile.GFile(root + "/cifar/test_batch.bin", "wb") as f:
    f.write(records.tobytes())
c_x, c_y = cifar10.load("test", data_dir=root + "/cifar", download=False)
print("RESULT " + json.dumps({
    "fm_images_equal": bool((fm_x[..., 0] == images).all()), "fm_labels": fm_y.tolist(), "labels": labels.tolist(),
    "cifar_images_equal": bool((c_x == pixels.transpose(0, 2, 3, 1)).all()), "cifar_labels": c_y.tolist(),
    "classes": classes.tolist(), "missing": fashion_mnist.find_files("train", data_dir=root + "/fm"),
}), flush=True)
'''


@pytest.fixture(scope="module")
def loaded() -> dict:
    with GcsEmulator(BUCKET) as gcs:
        try:
            return gcs.run_script(_SCRIPT, f"gs://{BUCKET}")
        except RuntimeError as failed_run:
            pytest.fail(f"the loaders failed on gs://: {failed_run}")


def test_fashion_mnist_reads_its_gzip_idx_files_from_a_gs_data_dir(loaded):
    assert loaded["fm_images_equal"] and loaded["fm_labels"] == loaded["labels"]


def test_cifar10_reads_its_binary_batches_from_a_gs_data_dir(loaded):
    assert loaded["cifar_images_equal"] and loaded["cifar_labels"] == loaded["classes"]


def test_files_missing_on_gs_are_not_found_rather_than_an_error(loaded):
    assert loaded["missing"] is None
