"""Strict reader for the IDX format (MNIST / Fashion-MNIST), .gz or uncompressed.

Validates header, dimensions and byte length so a truncated or mixed-up file fails loudly.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import numpy as np

IMAGES_MAGIC = 2051  # 0x00000803: unsigned bytes, 3 dimensions
LABELS_MAGIC = 2049  # 0x00000801: unsigned bytes, 1 dimension


def read_images(path: str, rows: int = 28, cols: int = 28) -> np.ndarray:
    """Read an idx3 image file into uint8 [N, rows, cols, 1]."""
    dims, payload = _read(path, IMAGES_MAGIC, ndim=3)
    if dims[1:] != (rows, cols):
        raise ValueError(f"{path}: images are {dims[1]}x{dims[2]}, expected {rows}x{cols}.")
    return payload.reshape(dims[0], rows, cols, 1)


def read_labels(path: str) -> np.ndarray:
    """Read an idx1 label file into int32 [N]."""
    _, payload = _read(path, LABELS_MAGIC, ndim=1)
    return payload.astype(np.int32)


def _read(path: str, magic: int, ndim: int) -> tuple[tuple[int, ...], np.ndarray]:
    """Return (dims, flat uint8 payload) after checking magic number and exact length."""
    raw = _read_bytes(path)
    header_len = 4 + 4 * ndim
    found_magic = struct.unpack(">i", raw[:4])[0] if len(raw) >= 4 else None
    if found_magic != magic:
        raise ValueError(f"{path}: bad magic number {found_magic}, expected {magic} (not an IDX file of this kind?).")
    if len(raw) < header_len:
        raise ValueError(f"{path}: file truncated: {len(raw)} bytes, shorter than the {header_len}-byte IDX header.")
    dims = struct.unpack(f">{ndim}i", raw[4:header_len])
    expected = header_len + int(np.prod(dims, dtype=np.int64))
    if len(raw) != expected:
        kind = "truncated" if len(raw) < expected else "has trailing bytes"
        raise ValueError(
            f"{path}: file {kind}: header says dims {dims} -> {expected} bytes, but file has {len(raw)} bytes."
        )
    return tuple(dims), np.frombuffer(raw, dtype=np.uint8, offset=header_len)


def _read_bytes(path: str) -> bytes:
    """Whole file contents, gunzipped when the name ends in .gz; corrupt gzip becomes ValueError."""
    if not path.endswith(".gz"):
        with open(path, "rb") as f:
            return f.read()
    try:
        with gzip.open(path, "rb") as f:
            return f.read()
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise ValueError(f"{path}: cannot decompress ({e}); the download may be truncated or corrupt.") from e
