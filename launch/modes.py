"""One function per --mode, looked up by name: train, evaluate, train_and_evaluate, predict, export."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import tensorflow as tf
from absl import logging

from estimators import EvalSpec, TPUEstimator, TrainSpec, train_and_evaluate
from input_fns import DatasetSource
from launch.images import load_images
from launch.serving import image_receiver_fn
from launch.settings import Settings


@dataclasses.dataclass(frozen=True)
class Run:
    """What every mode works with."""

    settings: Settings
    estimator: TPUEstimator
    dataset: DatasetSource

    def input_fn(self, mode: str):
        return self.dataset.input_fn(mode, self.settings.data_dir, seed=self.settings.seed)


def train(run: Run) -> dict:
    run.estimator.train(run.input_fn("train"), max_steps=run.settings.train_steps)
    return {"global_step": int(run.estimator.get_variable_value("global_step"))}


def evaluate(run: Run) -> dict:
    return run.estimator.evaluate(run.input_fn("eval"), steps=run.settings.eval_steps)


def train_then_evaluate(run: Run) -> dict:
    result, _ = train_and_evaluate(
        run.estimator,
        TrainSpec(run.input_fn("train"), max_steps=run.settings.train_steps),
        EvalSpec(run.input_fn("eval"), steps=run.settings.eval_steps),
    )
    return result


def predict(run: Run) -> dict:
    """Predicts the test set (or --predict_files) and prints one line per example with class names."""
    names = run.dataset.class_names
    truth = None
    if run.settings.predict_files:
        images = load_images(run.settings.predict_files, run.dataset.image_shape)
        sources = list(run.settings.predict_files)

        def input_fn(params):
            return tf.data.Dataset.from_tensor_slices(images).batch(params["batch_size"])
    else:
        input_fn = run.input_fn("infer")
        _, truth = run.dataset.load("test", run.settings.data_dir)
        sources = [f"test[{i}]" for i in range(len(truth))]
    correct = total = 0
    for index, prediction in enumerate(run.estimator.predict(input_fn)):
        cls = int(prediction["classes"])
        print(f"{sources[index]}: {names[cls]} ({float(np.max(prediction['probabilities'])):.1%})")
        total += 1
        correct += int(truth is not None and cls == truth[index])
    result = {"predicted": total}
    if truth is not None:
        result["accuracy"] = correct / max(total, 1)
    return result


def export(run: Run) -> dict:
    path = run.estimator.export_saved_model(run.settings.export_dir, image_receiver_fn(run.dataset.image_shape))
    logging.info("SavedModel written to %s", path.decode())
    return {"export_dir": path.decode()}


MODES: dict[str, Callable[[Run], dict]] = {
    "train": train,
    "evaluate": evaluate,
    "train_and_evaluate": train_then_evaluate,
    "predict": predict,
    "export": export,
}
