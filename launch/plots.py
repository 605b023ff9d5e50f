"""--plot pictures: a grid of images with predicted (and true) labels, and a confusion matrix.

matplotlib is the optional extra `plots` (`pip install -e ".[plots]"`), imported only when a picture
is drawn, through its object API (no pyplot, no global backend). PNGs are written with tf.io.gfile,
so model_dir-style paths (gs://, Drive) work, and appear whole or not at all.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

DPI = 100
RIGHT, WRONG, UNKNOWN = "#1a7f37", "#cf222e", "black"


class PlotsUnavailableError(RuntimeError):
    """matplotlib is not installed; the message says how to install the `plots` extra."""


def require_matplotlib() -> None:
    """PlotsUnavailableError naming the extra unless matplotlib can be imported."""
    if importlib.util.find_spec("matplotlib") is None:
        raise PlotsUnavailableError(
            "--plot needs matplotlib, which is not installed. Install the `plots` extra: "
            "pip install -e \".[plots]\" (or pip install matplotlib)."
        )


def _figure(width: float, height: float):
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI)


def confusion_matrix(truth: Sequence[int], predicted: Sequence[int], num_classes: int) -> np.ndarray:
    """int64 [num_classes, num_classes]: row = true class, column = predicted class."""
    truth, predicted = np.asarray(truth, np.int64), np.asarray(predicted, np.int64)
    if truth.shape != predicted.shape:
        raise ValueError(f"{truth.shape[0]} true labels but {predicted.shape[0]} predictions.")
    matrix = np.zeros((num_classes, num_classes), np.int64)
    np.add.at(matrix, (truth, predicted), 1)
    return matrix


def prediction_grid(images: np.ndarray, predicted: Sequence[int], class_names: Sequence[str],
                    truth: Sequence[int] | None = None, columns: int | None = None):
    """A Figure of the images, each titled with its predicted class: green when right, red with the
    true class when wrong, black when the truth is unknown (e.g. --predict_files)."""
    images = np.asarray(images)
    count = len(images)
    if count == 0:
        raise ValueError("No images to plot.")
    columns = columns or math.ceil(math.sqrt(count))
    rows = math.ceil(count / columns)
    figure = _figure(1.7 * columns, 2.0 * rows)
    for index, image in enumerate(images):
        axes = figure.add_subplot(rows, columns, index + 1)
        gray = image.shape[-1] == 1
        axes.imshow(image[..., 0] if gray else image, cmap="gray" if gray else None, vmin=0, vmax=255,
                    interpolation="nearest")
        axes.set_xticks([])
        axes.set_yticks([])
        name = class_names[int(predicted[index])]
        if truth is None:
            title, colour = name, UNKNOWN
        elif int(truth[index]) == int(predicted[index]):
            title, colour = name, RIGHT
        else:
            title, colour = f"{name}\n(true: {class_names[int(truth[index])]})", WRONG
        axes.set_title(title, color=colour, fontsize=8)
    figure.subplots_adjust(left=0.02, right=0.98, bottom=0.02, top=0.9, hspace=0.6, wspace=0.15)
    return figure


def confusion_matrix_figure(matrix: np.ndarray, class_names: Sequence[str], title: str = ""):
    """A Figure of the matrix: rows true, columns predicted, darker blue for more examples, counts written in."""
    matrix = np.asarray(matrix)
    classes = len(class_names)
    figure = _figure(2.0 + 0.6 * classes, 1.8 + 0.45 * classes)
    axes = figure.add_subplot(1, 1, 1)
    peak = max(int(matrix.max()), 1)
    image = axes.imshow(matrix, cmap="Blues", vmin=0, vmax=peak, interpolation="nearest")
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    for (row, column), count in np.ndenumerate(matrix):
        axes.text(column, row, str(count), ha="center", va="center", fontsize=7,
                  color="white" if count > peak / 2 else "black")
    axes.set_xticks(range(classes), labels=class_names, rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(classes), labels=class_names, fontsize=8)
    axes.set_xlabel("predicted")
    axes.set_ylabel("true")
    if title:
        axes.set_title(title, fontsize=9)
    figure.subplots_adjust(left=0.2, right=0.95, bottom=0.2, top=0.93)
    return figure


def save_png(figure, path: str) -> str:
    """Writes the figure as a PNG at `path` (any tf.io.gfile path) via a temporary name; returns path."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    folder = os.path.dirname(path)
    if folder:
        tf.io.gfile.makedirs(folder)
    partial = f"{path}.tmp-{os.getpid()}"
    with tf.io.gfile.GFile(partial, "wb") as f:
        f.write(buffer.getvalue())
    tf.io.gfile.rename(partial, path, overwrite=True)
    return path
