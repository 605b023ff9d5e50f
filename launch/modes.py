"""One function per --mode, looked up by name: train, evaluate, train_and_evaluate, predict, export, preflight."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from estimators import EvalSpec, ModeKeys, TPUEstimator, TrainSpec, train_and_evaluate
from estimators import log as logging
from estimators.preflight import preflight as tpu_preflight
from estimators.training.progress_display import expecting
from input_fns import DatasetSource
from launch import plots
from launch.images import load_images
from launch.run_info import reporting_batches
from launch.serving import image_receiver_fn
from launch.settings import Settings
from model_fns.common import CONFUSION_MATRIX

GRID_DEFAULT, GRID_MAX = 20, 64  # images in --plot's prediction grid
_PHASES = {"train": "train", "eval": "evaluate", "infer": "predict"}


@dataclasses.dataclass(frozen=True)
class Run:
    """What every mode works with."""

    settings: Settings
    estimator: TPUEstimator
    dataset: DatasetSource
    saving_listeners: tuple = ()  # train() and train_and_evaluate's (flags.txt with the first checkpoint)
    examples: dict = dataclasses.field(default_factory=dict)  # mode -> examples its input_fn holds (once loaded)

    def input_fn(self, mode: str):
        """The dataset's input_fn, logging at its first call the replicas and batch it was asked for.

        Its data is read and checked here, before the mode's estimator call: a run failing on bad data files
        fails before anything (an events file, a checkpoint) is written to model_dir.
        """
        input_fn = self.dataset.input_fn(mode, self.settings.data_dir, seed=self.settings.seed)
        images, _ = input_fn.load()
        self.examples[mode] = len(images)
        return reporting_batches(input_fn, _PHASES[mode], self.global_batch(mode))

    def evaluation_batches(self) -> int | None:
        """Batches an evaluation runs: --eval_steps, or enough for the whole test set (None: not loaded yet)."""
        examples = self.examples.get("eval")
        if examples is None:
            return None
        batches = math.ceil(examples / self.settings.eval_batch_size)
        return min(batches, self.settings.eval_steps) if self.settings.eval_steps else batches

    def global_batch(self, mode: str) -> int:
        settings = self.settings
        return {"train": settings.train_batch_size, "eval": settings.eval_batch_size,
                "infer": settings.predict_batch_size}[mode]


def _require_trained(run: Run) -> None:
    """evaluate/predict/export need a trained model: the API would fall back to initial weights, a CLI must not."""
    if run.estimator.latest_checkpoint() is None:
        raise ValueError(
            f"--model_dir={run.settings.model_dir} holds no checkpoint: train first (--mode=train or "
            "--mode=train_and_evaluate), or point --model_dir at a trained run."
        )


def train(run: Run) -> dict:
    run.estimator.train(run.input_fn("train"), max_steps=run.settings.train_steps,
                        saving_listeners=list(run.saving_listeners))
    return {"global_step": int(run.estimator.get_variable_value("global_step"))}


def evaluate(run: Run) -> dict:
    _require_trained(run)
    input_fn = run.input_fn("eval")
    with expecting("evaluate", run.evaluation_batches()):  # the progress line's total and ETA
        result = run.estimator.evaluate(input_fn, steps=run.settings.eval_steps)
    if run.settings.plot:
        _plot_confusion(run, result)
    return result


def train_then_evaluate(run: Run) -> dict:
    train_spec = TrainSpec(run.input_fn("train"), max_steps=run.settings.train_steps,
                           saving_listeners=run.saving_listeners)
    eval_spec = EvalSpec(run.input_fn("eval"), steps=run.settings.eval_steps, throttle_secs=0)  # every checkpoint
    with expecting("evaluate", run.evaluation_batches()):
        result, _ = train_and_evaluate(run.estimator, train_spec, eval_spec)
    if result is None:  # model_dir was already trained to --train_steps: train_and_evaluate (2.15's) evaluates nothing
        logging.info("Training already reached global step %s (--train_steps=%s): evaluating the final checkpoint.",
                     run.estimator.get_variable_value("global_step"), run.settings.train_steps)
        return evaluate(run)
    if run.settings.plot:
        _plot_confusion(run, result)
    return result


def predict(run: Run) -> dict:
    """Predicts the test set (or --predict_files): prints the first --predict_limit rows, then a summary."""
    _require_trained(run)
    settings, names = run.settings, run.dataset.class_names
    truth = None
    if settings.predict_files:
        images = load_images(settings.predict_files, run.dataset.image_shape)
        sources = list(settings.predict_files)
        input_fn = reporting_batches(_images_input_fn(images), "predict", run.global_batch("infer"))
    else:
        input_fn = run.input_fn("infer")
        images, truth = run.dataset.load("test", settings.data_dir)
        sources = [f"test[{i}]" for i in range(len(truth))]
    classes = []
    with expecting("predict", len(sources)):  # the progress line's total and ETA
        for index, prediction in enumerate(run.estimator.predict(input_fn)):
            cls = int(prediction["classes"])
            classes.append(cls)
            if index < settings.predict_limit:
                known = f", true {names[truth[index]]}" if truth is not None else ""
                print(f"{sources[index]}: {names[cls]} ({float(np.max(prediction['probabilities'])):.1%}){known}")
    _print_summary(np.asarray(classes, np.int64), names, settings.predict_limit)
    result = {"predicted": len(classes)}
    if truth is not None:
        result["accuracy"] = float(np.mean(np.asarray(classes) == truth[: len(classes)])) if classes else 0.0
    if settings.plot:
        shown = min(len(classes), settings.predict_limit or GRID_DEFAULT, GRID_MAX)
        figure = plots.prediction_grid(images[:shown], classes[:shown], names,
                                       truth[:shown] if truth is not None else None)
        logging.info("prediction grid written to %s", plots.save_png(figure, settings.plot))
    return result


def _images_input_fn(images: np.ndarray) -> Callable:
    def input_fn(params):
        return tf.data.Dataset.from_tensor_slices(images).batch(params["batch_size"])

    return input_fn


def _print_summary(classes: np.ndarray, names: tuple[str, ...], limit: int) -> None:
    if len(classes) > limit:
        print(f"... {len(classes) - limit} more (--predict_limit={limit} rows shown)")
    counts = np.bincount(classes, minlength=len(names))[: len(names)]
    print("predicted classes: " + ", ".join(f"{name} {count}" for name, count in zip(names, counts, strict=True)))


def evaluation_confusion_matrix(run: Run) -> np.ndarray:
    """[true, predicted] counts over the examples an evaluation sees (the first eval_steps batches), from a
    prediction pass over them: for an evaluation that did not count its matrix (a model_fn without
    CONFUSION_MATRIX), and the independent check of one that did."""
    settings = run.settings
    images, labels = run.dataset.load("test", settings.data_dir)
    if settings.eval_steps is not None:
        count = settings.eval_steps * settings.eval_batch_size
        images, labels = images[:count], labels[:count]
    with expecting("predict", len(images)):
        predicted = [int(p["classes"]) for p in run.estimator.predict(_images_input_fn(images))]
    return plots.confusion_matrix(labels, predicted, run.dataset.num_classes)


def _plot_confusion(run: Run, result: dict) -> None:
    """Draws the confusion matrix of the examples the evaluation saw at --plot.

    The evaluation counted it (params[CONFUSION_MATRIX], launch/build.py): taken out of `result` here, so the
    result printed stays numbers. Without it, a prediction pass over the evaluated examples counts it.
    """
    settings = run.settings
    matrix = result.pop(CONFUSION_MATRIX, None)
    if matrix is None:
        logging.info("The evaluation returned no %s: predicting its examples again to draw it.", CONFUSION_MATRIX)
        matrix = evaluation_confusion_matrix(run)
    matrix = np.asarray(matrix, np.int64)
    accuracy = np.trace(matrix) / max(int(matrix.sum()), 1)
    title = (f"{settings.model} on {run.dataset.name} test images ({int(matrix.sum()):,}), step "
             f"{result.get('global_step', '?')}: accuracy {accuracy:.2%}")
    figure = plots.confusion_matrix_figure(matrix, run.dataset.class_names, title)
    logging.info("confusion matrix written to %s", plots.save_png(figure, settings.plot))


def export(run: Run) -> dict:
    _require_trained(run)
    path = run.estimator.export_saved_model(run.settings.export_dir, image_receiver_fn(run.dataset.image_shape))
    return {"export_dir": path.decode()}  # the engine has logged the path with its signatures and checkpoint


def preflight(run: Run) -> dict:
    """Compiles the train, eval and predict steps as one TPU core runs them and prints what a TPU would reject.

    Nothing is trained and model_dir is neither read nor written; "ok" is False (main.py exits 1)
    when a TPU would reject something.
    """
    modes = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
    report = tpu_preflight(run.estimator, {mode: run.input_fn(mode) for mode in modes})
    print(report)
    return {"ok": report.ok, "errors": len(report.errors), "warnings": len(report.warnings)}


MODES: dict[str, Callable[[Run], dict]] = {
    "train": train,
    "evaluate": evaluate,
    "train_and_evaluate": train_then_evaluate,
    "predict": predict,
    "export": export,
    "preflight": preflight,
}
