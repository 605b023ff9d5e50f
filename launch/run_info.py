"""What a run says about itself at the start: the model's size, the data files, model_dir, replicas and batch."""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import Callable, Iterator

import tensorflow as tf

from estimators import log as logging
from input_fns import DatasetSource
from launch.settings import Settings
from model_fns import ModelInfo

_SPLITS = {"train": ("train",), "evaluate": ("test",), "train_and_evaluate": ("train", "test"),
           "predict": ("test",), "export": (), "preflight": ("train", "test")}


@contextlib.contextmanager
def _keras_names_kept() -> Iterator[bool]:
    """Restores Keras's layer-name counters afterwards, so a network built on the side does not
    rename the layers model_fn builds next (dense -> dense_1 would change variable names).

    Yields False when this Keras keeps them elsewhere: then nothing may be built.
    """
    try:
        from keras.src.backend.common import global_state
    except ImportError:
        yield False
        return
    saved = global_state.get_global_attribute("object_name_uids")
    kept = collections.defaultdict(int, saved) if saved is not None else None
    try:
        yield True
    finally:
        global_state.set_global_attribute("object_name_uids", kept)


def count_parameters(model: ModelInfo, params: dict) -> tuple[int, int] | None:
    """(all, trainable) parameters of the model's network; None if it registered no `network`."""
    if model.network is None:
        return None
    with _keras_names_kept() as safe:
        if not safe:
            return None
        network = model.network(params)
        trainable = sum(int(tf.size(w)) for w in network.trainable_weights)
        return network.count_params(), trainable


def data_files(settings: Settings, dataset: DatasetSource) -> dict[str, tuple[str, ...]]:
    """split -> the files this mode reads; DatasetNotFoundError (naming where it looked) if missing."""
    splits = () if settings.mode == "predict" and settings.predict_files else _SPLITS[settings.mode]
    return {split: dataset.files(split, settings.data_dir) for split in splits}


def _checkpoint_state(model_dir: str) -> str:
    try:
        path = tf.train.latest_checkpoint(model_dir) if tf.io.gfile.isdir(model_dir) else None
    except (ValueError, UnicodeDecodeError, tf.errors.OpError) as err:  # a damaged `checkpoint` state file
        return f"its checkpoint state file is unreadable ({type(err).__name__}); the newest complete checkpoint is used"
    if not path:
        return "no checkpoint yet"
    step = path.rsplit("-", 1)[-1]
    return f"newest checkpoint at step {step}" if step.isdigit() else f"newest checkpoint {path}"


def describe(settings: Settings, model: ModelInfo, dataset: DatasetSource) -> None:
    """Logs the model's parameter count, the data files used and model_dir; fails early on missing data."""
    files_by_split = data_files(settings, dataset)  # first: missing data fails before anything is built
    counted = count_parameters(model, settings.model_params(model.default_params))
    if counted is not None:
        logging.info("model: %s, %s parameters (%s trainable)", model.name, f"{counted[0]:,}", f"{counted[1]:,}")
    if settings.precision != "float32":
        logging.info("precision: %s (Keras mixed_%s: float32 variables and loss, %s compute)", settings.precision,
                     settings.precision, settings.precision)
    for split, files in files_by_split.items():
        if files:
            folder = os.path.dirname(files[0])
            names = ", ".join(os.path.relpath(f, folder) for f in files)
            logging.info("%s data: %s in %s", split, names, folder)
        elif dataset.locate is None:
            logging.info("%s data: %s, generated in memory", split, dataset.name)
        else:
            logging.info("%s data: %s not found locally; it will be downloaded", split, dataset.name)
    if settings.mode == "predict" and settings.predict_files:
        logging.info("predict data: %d image file(s)", len(settings.predict_files))
    logging.info("model_dir: %s (%s)", settings.model_dir, _checkpoint_state(settings.model_dir))


def reporting_batches(input_fn: Callable, phase: str, global_batch: int) -> Callable:
    """input_fn that logs, at its first call, the replicas, per-replica batch and what input_fn is asked to batch."""
    said = []

    def wrapped(params):
        if not said:
            said.append(True)
            context = params.get("context")
            replicas = context.num_replicas_in_sync if context is not None else 1
            asked = params.get("batch_size")
            per_replica = global_batch // replicas
            split = f"; input_fn makes batches of {asked}, cut into per-replica slices" if asked not in (
                None, per_replica) else ""
            logging.info("%s: %d replica%s x %d examples per replica = global batch %d%s", phase, replicas,
                         "s" if replicas != 1 else "", per_replica, global_batch, split)
        return input_fn(params)

    return wrapped
