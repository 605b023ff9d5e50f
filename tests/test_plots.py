"""--plot: confusion matrices and prediction grids as PNGs, read back and checked pixel by pixel."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from absl import flags

import main
from launch import plots
from launch.build import start_run
from launch.modes import evaluation_confusion_matrix
from launch.settings import Settings

pytest.importorskip("matplotlib", reason='matplotlib is the optional `plots` extra: pip install -e ".[plots]"')

FLAGS = flags.FLAGS
TINY = ["--train_batch_size=8", "--eval_batch_size=50", "--predict_batch_size=50", "--iterations_per_loop=2",
        "--train_steps=2", "--save_checkpoints_steps=2", "--dataset=synthetic"]
NAMES = tuple(f"class_{i}" for i in range(4))


def run_main(*argv: str) -> None:
    FLAGS.unparse_flags()
    FLAGS(["main.py", *argv])
    main.main(["main.py"])


def read_png(path: str) -> np.ndarray:
    return tf.io.decode_png(tf.io.read_file(path), channels=3).numpy().astype(np.int64)


def pixel(image: np.ndarray, figure, axes, x: float, y: float) -> np.ndarray:
    """The RGB at data point (x, y) of `axes` in the saved PNG (display y counts up from the bottom)."""
    px, py = axes.transData.transform((x, y))
    return image[int(round(image.shape[0] - py)), int(round(px))]


def test_confusion_matrix_counts_true_rows_and_predicted_columns():
    matrix = plots.confusion_matrix([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 2, 0], 3)
    np.testing.assert_array_equal(matrix, [[1, 1, 0], [0, 1, 0], [1, 0, 2]])


def test_the_evaluation_metric_counts_the_same_matrix_over_its_batches_and_resets():
    from model_fns.common import ConfusionMatrix

    metric = ConfusionMatrix(3)
    metric.update_state(tf.constant([0, 0, 1]), tf.one_hot([0, 1, 1], 3))
    metric.update_state(tf.constant([2, 2, 2]), tf.one_hot([2, 2, 0], 3))
    expected = plots.confusion_matrix([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 2, 0], 3)
    np.testing.assert_array_equal(metric.result().numpy(), expected)
    metric.reset_state()
    assert metric.result().numpy().sum() == 0


def test_confusion_matrix_png_cells_darken_with_their_counts(tmp_path):
    counts = np.array([[0, 1, 2, 3], [4, 6, 8, 10], [12, 16, 20, 25], [30, 35, 40, 50]])
    figure = plots.confusion_matrix_figure(counts, NAMES, "test")
    path = plots.save_png(figure, str(tmp_path / "confusion.png"))
    image = read_png(path)
    width, height = figure.get_size_inches() * plots.DPI
    assert image.shape == (round(height), round(width), 3)
    axes = figure.axes[0]
    # Sample each cell off-centre (its count is written in the middle).
    brightness = {int(counts[r, c]): pixel(image, figure, axes, c + 0.35, r + 0.35).sum()
                  for r in range(4) for c in range(4)}
    ordered = [brightness[count] for count in sorted(brightness)]
    assert all(a >= b for a, b in zip(ordered, ordered[1:], strict=False)), ordered
    assert ordered[0] > 700 and ordered[-1] < 300  # empty cells near white, the largest dark blue
    assert (pixel(image, figure, axes, 3.35, 3.35)[2] > pixel(image, figure, axes, 3.35, 3.35)[0])  # blue


def test_prediction_grid_png_shows_each_image_titled_green_when_right_red_when_wrong(tmp_path):
    images = np.zeros((6, 28, 28, 1), np.uint8)
    images[::2] = 255  # white, black, white, ...
    predicted, truth = [0, 1, 2, 3, 0, 1], [0, 1, 2, 0, 0, 1]  # the fourth is wrong
    figure = plots.prediction_grid(images, predicted, NAMES, truth)
    image = read_png(plots.save_png(figure, str(tmp_path / "grid.png")))
    width, height = figure.get_size_inches() * plots.DPI
    assert image.shape == (round(height), round(width), 3) and image.std() > 20
    for index, axes in enumerate(figure.axes):
        centre = pixel(image, figure, axes, 14, 14)
        assert centre.sum() == (765 if index % 2 == 0 else 0), index
    titles = [(axes.get_title(), axes.title.get_color()) for axes in figure.axes]
    assert titles[3] == ("class_3\n(true: class_0)", plots.WRONG)
    assert all(colour == plots.RIGHT for i, (_, colour) in enumerate(titles) if i != 3)
    reddish = (image[..., 0] > 150) & (image[..., 1] < 90) & (image[..., 2] < 90)
    greenish = (image[..., 1] > 90) & (image[..., 0] < 80) & (image[..., 2] < 100)
    assert reddish.sum() > 20 and greenish.sum() > 20


def test_predict_mode_writes_a_grid_of_the_printed_rows(tmp_path, capsys):
    model_dir = str(tmp_path / "cnn")
    run_main("--model=cnn", "--mode=train", f"--model_dir={model_dir}", *TINY)
    path = str(tmp_path / "out" / "grid.png")
    run_main("--model=cnn", "--mode=predict", f"--model_dir={model_dir}", "--predict_limit=6", f"--plot={path}",
             *TINY)
    image = read_png(path)
    assert image.shape == (400, 510, 3) and image.std() > 20  # 3 columns x 2 rows of 1.7 x 2.0 inches
    assert capsys.readouterr().out.count("test[") == 6


def test_evaluate_mode_plots_the_confusion_matrix_of_the_evaluated_examples(tmp_path, capsys):
    model_dir = str(tmp_path / "cnn")
    run_main("--model=cnn", "--mode=train", f"--model_dir={model_dir}", *TINY)
    path = str(tmp_path / "confusion.png")
    run_main("--model=cnn", "--mode=evaluate", f"--model_dir={model_dir}", f"--plot={path}", "--eval_steps=3", *TINY)
    assert read_png(path).shape == (round(100 * (1.8 + 4.5)), round(100 * (2.0 + 6.0)), 3)
    settings = Settings(model_dir=model_dir, dataset="synthetic", mode="evaluate", eval_steps=3, eval_batch_size=50,
                        predict_batch_size=50).resolved("synthetic")
    run = start_run(settings, main.model_fns.get_model("cnn"), [])
    matrix = evaluation_confusion_matrix(run)
    evaluated = run.estimator.evaluate(run.input_fn("eval"), steps=3)
    assert matrix.sum() == 150
    assert np.trace(matrix) / matrix.sum() == pytest.approx(evaluated["accuracy"], abs=1e-6)


def test_evaluate_mode_plots_the_matrix_the_evaluation_counted_without_a_predict_pass(tmp_path, capsys, monkeypatch):
    from estimators.estimator import Estimator

    model_dir = str(tmp_path / "cnn")
    run_main("--model=cnn", "--mode=train", f"--model_dir={model_dir}", *TINY)
    drawn, figure = [], plots.confusion_matrix_figure
    monkeypatch.setattr(plots, "confusion_matrix_figure",
                        lambda matrix, *args: drawn.append(matrix) or figure(matrix, *args))

    def no_predict(self, *args, **kwargs):
        raise AssertionError("--plot after an evaluation ran a prediction pass")

    with monkeypatch.context() as patched:
        patched.setattr(Estimator, "predict", no_predict)
        capsys.readouterr()
        run_main("--model=cnn", "--mode=evaluate", f"--model_dir={model_dir}", f"--plot={tmp_path / 'c.png'}",
                 "--eval_steps=3", *TINY)
    printed = capsys.readouterr().out
    assert "confusion_matrix" not in printed and "'accuracy'" in printed  # the printed result stays numbers
    settings = Settings(model_dir=model_dir, dataset="synthetic", mode="evaluate", eval_steps=3, eval_batch_size=50,
                        predict_batch_size=50).resolved("synthetic")
    predicted = evaluation_confusion_matrix(start_run(settings, main.model_fns.get_model("cnn"), []))
    assert len(drawn) == 1 and drawn[0].dtype == np.int64 and drawn[0].sum() == 150
    np.testing.assert_array_equal(drawn[0], predicted)
