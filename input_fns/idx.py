"""Strict, memory-bounded reader for the IDX format (MNIST / Fashion-MNIST), .gz or uncompressed.

The header (magic number, dimensions) is read and checked first, against the shape and the largest
count the caller expects, before any of the body is decompressed; the body is then read in bounded
chunks into an array of exactly the declared size, so a small gzip that inflates to gigabytes, or
a header declaring a huge array, costs no more memory than a real file. A truncated, mixed-up or
oversized file fails loudly, naming the file.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import numpy as np
import tensorflow as tf

IMAGES_MAGIC = 2051  # 0x00000803: unsigned bytes, 3 dimensions
LABELS_MAGIC = 2049  # 0x00000801: unsigned bytes, 1 dimension
MAX_PAYLOAD_BYTES = 1 << 30  # whatever the caller allows, no IDX body larger than this is read
_CHUNK = 1 << 20  # bytes decompressed per read


def read_images(path: str, rows: int = 28, cols: int = 28, max_count: int | None = None) -> np.ndarray:
    """Read an idx3 image file into uint8 [N, rows, cols, 1]; at most `max_count` images."""
    with _open(path) as f:
        dims = _header(f, path, IMAGES_MAGIC, ndim=3)
        if dims[1:] != (rows, cols):
            raise ValueError(f"{path}: images are {dims[1]}x{dims[2]}, expected {rows}x{cols}.")
        _check_count(path, dims, "images", max_count)
        payload = _body(f, path, dims)
    return payload.reshape(dims[0], rows, cols, 1)


def read_labels(path: str, max_count: int | None = None) -> np.ndarray:
    """Read an idx1 label file into int32 [N]; at most `max_count` labels."""
    with _open(path) as f:
        dims = _header(f, path, LABELS_MAGIC, ndim=1)
        _check_count(path, dims, "labels", max_count)
        payload = _body(f, path, dims)
    return payload.astype(np.int32)


class _Reader:
    """A file (gunzipped when its name ends in .gz) whose decompression errors become ValueError."""

    def __init__(self, path: str):
        self._path = path
        self._raw = tf.io.gfile.GFile(path, "rb")
        self._file = gzip.GzipFile(fileobj=self._raw, mode="rb") if path.endswith(".gz") else self._raw

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._file is not self._raw:
            self._file.close()
        self._raw.close()

    def read(self, size: int) -> bytes:
        try:
            return self._file.read(size)
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise ValueError(
                f"{self._path}: cannot decompress ({e}); the download may be truncated or corrupt."
            ) from e


def _open(path: str) -> _Reader:
    return _Reader(path)


def _header(f: _Reader, path: str, magic: int, ndim: int) -> tuple[int, ...]:
    """The dimensions after checking the magic number; only the header's bytes are read."""
    header_len = 4 + 4 * ndim
    raw = _read_exactly(f, header_len)
    found_magic = struct.unpack(">i", raw[:4])[0] if len(raw) >= 4 else None
    if found_magic != magic:
        raise ValueError(f"{path}: bad magic number {found_magic}, expected {magic} (not an IDX file of this kind?).")
    if len(raw) < header_len:
        raise ValueError(f"{path}: file truncated: {len(raw)} bytes, shorter than the {header_len}-byte IDX header.")
    dims = struct.unpack(f">{ndim}i", raw[4:])
    if min(dims) < 0:
        raise ValueError(f"{path}: header declares negative dims {dims} (damaged or not an IDX file).")
    return tuple(dims)


def _check_count(path: str, dims: tuple[int, ...], what: str, max_count: int | None) -> None:
    """Refuses, before reading the body, a header declaring more items or bytes than may be read."""
    size = int(np.prod(dims, dtype=np.int64))
    if max_count is not None and dims[0] > max_count:
        raise ValueError(
            f"{path}: header declares {dims[0]:,} {what} ({_megabytes(size)} decompressed), more than the "
            f"{max_count:,} this file can hold; not reading it. Fix: replace it with the dataset's real file."
        )
    if size > MAX_PAYLOAD_BYTES:
        raise ValueError(
            f"{path}: header declares dims {dims} ({_megabytes(size)} decompressed), more than the "
            f"{_megabytes(MAX_PAYLOAD_BYTES)} limit for an IDX file; not reading it."
        )


def _body(f: _Reader, path: str, dims: tuple[int, ...]) -> np.ndarray:
    """Exactly the declared payload, read in chunks; one byte more than declared is an error, found
    without decompressing the rest."""
    size = int(np.prod(dims, dtype=np.int64))
    header_len = 4 + 4 * len(dims)
    payload = np.empty(size, dtype=np.uint8)
    view = memoryview(payload)
    filled = 0
    while filled < size:
        chunk = f.read(min(_CHUNK, size - filled))
        if not chunk:
            raise ValueError(
                f"{path}: file truncated: header says dims {dims} -> {header_len + size} bytes, "
                f"but file has {header_len + filled} bytes."
            )
        view[filled : filled + len(chunk)] = chunk
        filled += len(chunk)
    if f.read(1):
        raise ValueError(
            f"{path}: file has trailing bytes: header says dims {dims} -> {header_len + size} bytes, but the "
            "file holds more (not read further)."
        )
    return payload


def _read_exactly(f: _Reader, size: int) -> bytes:
    parts, got = [], 0
    while got < size:
        chunk = f.read(size - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"
