"""Small files that would cost gigabytes: refused from their headers, with one clear error, in bounded memory.

Each case runs in a fresh process and compares its peak resident memory (resource.getrusage) before and after
reading the file: the reader may not grow it by more than MEMORY_BOUND, whatever the file says it holds.
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEMORY_BOUND = 256 << 20  # bytes of peak-memory growth allowed while refusing a hostile file
ZEROS_PER_MEMBER = 64 << 20


def _zero_members(total: int) -> bytes:
    """gzip members that inflate to `total` bytes of zeros (one member compressed, repeated: ~1000:1)."""
    member = gzip.compress(bytes(ZEROS_PER_MEMBER), compresslevel=9)
    return member * (total // ZEROS_PER_MEMBER)


def _png(width: int, height: int) -> bytes:
    """A valid 1-bit greyscale PNG of width x height black pixels (a few hundred KB for 15000 x 15000)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = bytes(1 + (width + 7) // 8)  # filter byte 0, then the packed pixels
    compressor = zlib.compressobj(9)
    idat = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _measured(call: str) -> dict:
    """Runs `call` (Python, after the project's imports) in a fresh process: its ValueError and peak-memory growth."""
    program = f"""
import json, resource
import tensorflow as tf
from input_fns import fashion_mnist, idx
from launch import images
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
error = None
try:
    {call}
except ValueError as err:
    error = str(err)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"error": error, "growth": after - before}}))
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_idx_header_declaring_gigabytes_is_refused_before_its_body_is_decompressed(tmp_path):
    """2.7 million 28x28 images (2.1 GB once inflated, 2 MB on disk) where Fashion-MNIST train holds 60,000."""
    path = tmp_path / "train-images-idx3-ubyte.gz"
    count = 2_700_000
    path.write_bytes(gzip.compress(struct.pack(">iiii", 2051, count, 28, 28)) + _zero_members(count * 784))
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(struct.pack(">ii", 2049, 10) + bytes(10)))
    result = _measured(f"fashion_mnist.load('train', {str(tmp_path)!r}, search_dirs=[])")
    assert result["error"] is not None and str(path) in result["error"]
    assert "header declares 2,700,000 images" in result["error"] and "60,000" in result["error"]
    assert result["growth"] < MEMORY_BOUND, f"peak memory grew by {result['growth'] / 1e9:.2f} GB"


def test_idx_body_inflating_past_its_header_is_refused_without_inflating_the_rest(tmp_path):
    """A header honestly declaring 10 images, followed by 2 GB of zeros in a 2 MB gzip."""
    path = tmp_path / "t10k-images-idx3-ubyte.gz"
    path.write_bytes(gzip.compress(struct.pack(">iiii", 2051, 10, 28, 28) + bytes(10 * 784)) + _zero_members(2 << 30))
    result = _measured(f"idx.read_images({str(path)!r})")
    assert result["error"] is not None and str(path) in result["error"]
    assert "trailing bytes" in result["error"]
    assert result["growth"] < MEMORY_BOUND, f"peak memory grew by {result['growth'] / 1e9:.2f} GB"


def test_tiny_png_declaring_15000_by_15000_pixels_is_refused_before_decoding(tmp_path):
    path = tmp_path / "huge.png"
    path.write_bytes(_png(15000, 15000))
    assert path.stat().st_size < 1 << 20
    result = _measured(f"images.load_images([{str(path)!r}], (28, 28, 1))")
    assert result["error"] is not None
    for words in (repr(str(path)), f"{path.stat().st_size:,} bytes", "15000x15000", "40,000,000 pixels"):
        assert words in result["error"], result["error"]
    assert result["growth"] < MEMORY_BOUND, f"peak memory grew by {result['growth'] / 1e9:.2f} GB"


def test_gif_frame_larger_than_its_logical_screen_counts(tmp_path):
    """TensorFlow's GIF decoder allocates the largest frame: a 1x1 screen with a 20000x20000 frame is 400 MP."""
    from launch import images

    screen = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0, 0, 0)
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 20000, 20000, 0) + b"\x02\x00"  # LZW code size, no data
    path = tmp_path / "frame.gif"
    path.write_bytes(screen + frame + b"\x3b")
    with pytest.raises(ValueError, match="declares 20000x20000 pixels"):
        images.load_images([str(path)], (28, 28, 1))


def test_image_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from launch import images

    monkeypatch.setattr(images, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.png"
    path.write_bytes(_png(100, 100) + bytes(2000))
    with pytest.raises(ValueError, match=r"big\.png' is 2,\d{3} bytes, over the 1,000-byte limit"):
        images.load_images([str(path)], (28, 28, 1))


def test_images_within_the_limits_still_load(tmp_path):
    from launch import images

    path = tmp_path / "small.png"
    path.write_bytes(_png(300, 200))
    loaded = images.load_images([str(path)], (28, 28, 1))
    assert loaded.shape == (1, 28, 28, 1) and loaded.dtype.name == "uint8" and not loaded.any()
