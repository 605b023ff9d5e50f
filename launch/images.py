"""Image files (PNG, JPEG, GIF, BMP, WebP) as the uint8 arrays a dataset stores, for --predict_files.

A file's size and the width x height its header declares are checked before it is decoded: a tiny
PNG can declare 15000x15000 pixels, which decoding and resizing would turn into gigabytes.
"""

from __future__ import annotations

import struct

import numpy as np
import tensorflow as tf

MAX_FILE_BYTES = 64 << 20  # an image file larger than this is not read
MAX_PIXELS = 40_000_000  # width x height of the largest image decoded (8000 x 5000)
_FORMATS = "PNG, JPEG, GIF, BMP or WebP"


def load_images(paths: tuple[str, ...] | list[str], image_shape: tuple[int, int, int]) -> np.ndarray:
    """Decodes, converts channels and resizes each file to image_shape; ValueError names a bad file."""
    height, width, channels = image_shape
    images = []
    for path in paths:
        contents = read_bounded(path)
        try:
            image = tf.io.decode_image(contents, channels=3, expand_animations=False)
        except tf.errors.InvalidArgumentError:
            raise ValueError(f"--predict_files: {path!r} is not a {_FORMATS} image.") from None
        if channels == 1:
            image = tf.image.rgb_to_grayscale(image)
        image = tf.image.resize(image, [height, width], antialias=True)
        images.append(tf.cast(tf.clip_by_value(tf.round(image), 0, 255), tf.uint8).numpy())
    return np.stack(images)


def read_bounded(path: str) -> bytes:
    """The file's bytes, once its size and its header's width x height are known to be within the limits."""
    if not tf.io.gfile.exists(path):
        raise ValueError(f"--predict_files: {path!r} does not exist.")
    size = tf.io.gfile.stat(path).length
    if size > MAX_FILE_BYTES:
        raise ValueError(f"--predict_files: {path!r} is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for an "
                         "image file; pass a smaller copy (the model sees it resized anyway).")
    with tf.io.gfile.GFile(path, "rb") as f:
        contents = f.read()
    dims = header_size(contents)
    if dims is None:
        raise ValueError(f"--predict_files: {path!r} is not a {_FORMATS} image.")
    image_width, image_height = dims
    if image_width * image_height > MAX_PIXELS:
        raise ValueError(
            f"--predict_files: {path!r} ({size:,} bytes) declares {image_width}x{image_height} pixels, over the "
            f"limit of {MAX_PIXELS:,} pixels (8000x5000) an image may decode to; pass a smaller copy "
            "(the model sees it resized anyway)."
        )
    return contents


def header_size(contents: bytes) -> tuple[int, int] | None:
    """(width, height) an image's header declares, read without decoding; None when not a known format or
    the header is cut short."""
    try:
        if contents.startswith(b"\x89PNG\r\n\x1a\n") and contents[12:16] == b"IHDR":
            return struct.unpack(">II", contents[16:24])
        if contents.startswith((b"GIF87a", b"GIF89a")):
            return _gif_size(contents)
        if contents.startswith(b"BM"):
            width, height = struct.unpack("<ii", contents[18:26])
            return abs(width), abs(height)
        if contents.startswith(b"\xff\xd8"):
            height, width, _ = tf.io.extract_jpeg_shape(contents).numpy().tolist()
            return width, height
        if contents.startswith(b"RIFF") and contents[8:12] == b"WEBP":
            return _webp_size(contents)
    except (struct.error, tf.errors.InvalidArgumentError):
        return None
    return None


def _gif_size(contents: bytes) -> tuple[int, int]:
    """The canvas TensorFlow's GIF decoder allocates: the logical screen, or the largest frame if larger."""
    width, height, packed = struct.unpack("<HHB", contents[6:11])
    position = 13 + (3 << ((packed & 7) + 1) if packed & 0x80 else 0)
    while position < len(contents):
        block = contents[position]
        if block == 0x2C:  # image descriptor: left, top, width, height, packed
            _, _, frame_width, frame_height, packed = struct.unpack("<HHHHB", contents[position + 1:position + 10])
            width, height = max(width, frame_width), max(height, frame_height)
            position += 10 + (3 << ((packed & 7) + 1) if packed & 0x80 else 0) + 1  # + LZW minimum code size
        elif block == 0x21:  # extension: label, then data sub-blocks
            position += 2
        else:  # 0x3B trailer, or damage the decoder will report
            break
        while position < len(contents) and contents[position]:  # data sub-blocks up to the empty one
            position += contents[position] + 1
        position += 1
    return width, height


def _webp_size(contents: bytes) -> tuple[int, int] | None:
    """Canvas size of a WebP file (lossy VP8, lossless VP8L or extended VP8X)."""
    chunk = contents[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(contents[24:27], "little") + 1
        height = int.from_bytes(contents[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L":
        bits = int.from_bytes(contents[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", contents[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None
