"""Exporters for EvalSpec(exporters=...): after each evaluation, export a SavedModel (tf.estimator's kinds).

train_and_evaluate calls `exporter.export(estimator, export_path, checkpoint_path, eval_result,
is_the_final_export)` with export_path = model_dir/export/<exporter.name>. LatestExporter exports
every time, FinalExporter at the end only, BestExporter when the evaluation beats the best so far
(read back from model_dir's eval event files after a restart). Exports are folders named by a
10-digit timestamp; all but the newest `exports_to_keep` are deleted.
"""

from __future__ import annotations

import abc
import inspect
import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from estimators import log as logging
from estimators.export import gc
from estimators.training.summaries import scalar_value

_LOSS = "loss"


class Exporter(abc.ABC):
    """One kind of export run after evaluations; `name` is its folder under model_dir/export."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The folder name under model_dir/export where this exporter writes."""

    @abc.abstractmethod
    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> bytes | None:
        """Exports `checkpoint_path` under `export_path`; returns the export's folder, or None if skipped."""


def validate_exporters(exporters: Any) -> tuple:
    """EvalSpec's exporters as a tuple: None, one Exporter, or an iterable of Exporters with distinct names."""
    if not exporters:
        return ()
    if isinstance(exporters, Exporter):
        exporters = (exporters,)
    try:
        exporters = tuple(exporters)
    except TypeError:
        exporters = (exporters,)
    names: list = []
    all_names = [getattr(e, "name", None) for e in exporters]
    for exporter in exporters:
        if not isinstance(exporter, Exporter):
            raise TypeError(
                "`exporters` must be an Exporter, an iterable of Exporter, or `None`: EvalSpec(exporters=...) takes "
                "an Exporter (LatestExporter, BestExporter, FinalExporter), an iterable of them, or None; found "
                f"{type(exporter).__name__}: {exporter!r}."
            )
        name = exporter.name
        if not name:
            raise ValueError(f"An Exporter cannot have a name that is `None` or empty: give each exporter a name "
                             f"(its folder under model_dir/export). All exporter names: {all_names}.")
        if not isinstance(name, str):
            raise ValueError(f"An Exporter must have a string name (its folder under model_dir/export). Given: "
                             f"{type(name).__name__} {name!r}.")
        if name in names:
            raise ValueError(f"`exporters` must have unique names (each is its folder under model_dir/export). All "
                             f"exporter names: {all_names}.")
        names.append(name)
    return exporters


class _SavedModelExport:
    """The settings every exporter passes to estimator.export_saved_model."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: dict | None, as_text: bool):
        if not isinstance(name, str) or not name:
            raise ValueError(f"An exporter's name must be a non-empty string (its folder under model_dir/export), "
                             f"got {name!r}.")
        if not callable(serving_input_receiver_fn):
            raise ValueError(
                f"exporter {name!r} needs serving_input_receiver_fn, a function returning a "
                f"ServingInputReceiver; got {serving_input_receiver_fn!r}."
            )
        self.name = name
        self._receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    def __call__(self, estimator: Any, export_path: str, checkpoint_path: str) -> bytes:
        return estimator.export_saved_model(export_path, self._receiver_fn, assets_extra=self._assets_extra,
                                            as_text=self._as_text, checkpoint_path=checkpoint_path)


def _check_exports_to_keep(exports_to_keep: int | None) -> None:
    if exports_to_keep is not None and (not isinstance(exports_to_keep, int) or exports_to_keep <= 0):
        raise ValueError(f"`exports_to_keep`, if provided, must be a positive number: a positive integer or None "
                         f"(keep all), got {exports_to_keep!r}.")


def garbage_collect_exports(export_dir_base: str, exports_to_keep: int | None) -> None:
    """Deletes all but the newest `exports_to_keep` exports (10-digit folder names) in export_dir_base."""
    if exports_to_keep is None or not tf.io.gfile.isdir(export_dir_base):
        return

    def timestamp(path: gc.Path) -> gc.Path | None:
        name = os.path.basename(path.path)
        return path._replace(export_version=int(name)) if len(name) == 10 and name.isdigit() else None

    paths = gc.get_paths(export_dir_base, timestamp)
    for path in gc.negation(gc.largest_export_versions(exports_to_keep))(paths):
        try:
            tf.io.gfile.rmtree(path.path)
        except tf.errors.NotFoundError as err:
            logging.warning("Can not delete %s recursively: %s", path.path, err)


class LatestExporter(Exporter):
    """Exports after every evaluation, keeping the newest `exports_to_keep` exports (None: all)."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: dict | None = None,
                 as_text: bool = False, exports_to_keep: int | None = 5):
        self._export = _SavedModelExport(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_exports_to_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._export.name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> bytes:
        result = self._export(estimator, export_path, checkpoint_path)
        garbage_collect_exports(export_path, self._exports_to_keep)
        return result


class FinalExporter(Exporter):
    """Exports once, after the final evaluation of train_and_evaluate."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: dict | None = None,
                 as_text: bool = False):
        self._export = _SavedModelExport(name, serving_input_receiver_fn, assets_extra, as_text)

    @property
    def name(self) -> str:
        return self._export.name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> bytes | None:
        if not is_the_final_export:
            return None
        logging.info("Performing the final export in the end of training.")
        return self._export(estimator, export_path, checkpoint_path)


def _loss_smaller(best_eval_result: dict, current_eval_result: dict) -> bool:
    """True when current_eval_result's loss is smaller than best_eval_result's."""
    for label, result in (("best_eval_result", best_eval_result), ("current_eval_result", current_eval_result)):
        if not result or _LOSS not in result:
            raise ValueError(f"{label} cannot be empty or without a {_LOSS!r}: {result!r}.")
    return best_eval_result[_LOSS] > current_eval_result[_LOSS]


def _check_compare_fn(compare_fn: Callable) -> None:
    if compare_fn is None:
        raise ValueError("compare_fn must not be None.")
    try:
        names = set(inspect.signature(compare_fn).parameters)
    except (TypeError, ValueError) as err:
        raise ValueError(f"compare_fn ({compare_fn!r}) must be a function: {err}") from None
    expected = {"best_eval_result", "current_eval_result"}
    if not expected <= names:
        raise ValueError(f"compare_fn ({compare_fn!r}) must take arguments best_eval_result and current_eval_result.")
    if names - expected:
        raise ValueError(f"compare_fn ({compare_fn!r}) has unexpected arguments: {sorted(names - expected)}.")


def read_eval_results(pattern: str) -> list[dict]:
    """Evaluation results in event files matching `pattern`: {tag: value} per step, in file order.

    tf.estimator wrote one event per evaluation; TF2 summaries write one event per scalar, so
    the scalars of one step are gathered into one result.
    """
    results: list[dict] = []
    for path in sorted(tf.io.gfile.glob(pattern)):
        by_step: dict[int, dict] = {}
        for event in tf.compat.v1.train.summary_iterator(path):
            if not event.HasField("summary"):
                continue
            values = {v.tag: x for v in event.summary.value if (x := scalar_value(v)) is not None}
            if values:
                by_step.setdefault(event.step, {}).update(values)
        results.extend(by_step.values())
    return results


class BestExporter(Exporter):
    """Exports when an evaluation beats the best one so far (by `compare_fn`; default: smaller loss).

    The best result so far is read from the eval event files of model_dir (`event_file_pattern`),
    so a restarted job does not export a worse model; the first export of a run always happens.
    """

    def __init__(self, name: str = "best_exporter", serving_input_receiver_fn: Callable | None = None,
                 event_file_pattern: str | None = "eval/*.tfevents.*", compare_fn: Callable = _loss_smaller,
                 assets_extra: dict | None = None, as_text: bool = False, exports_to_keep: int | None = 5):
        _check_compare_fn(compare_fn)
        self._compare_fn = compare_fn
        self._export = _SavedModelExport(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_exports_to_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep
        self._event_file_pattern = event_file_pattern
        self._model_dir: str | None = None
        self._best_eval_result: dict | None = None
        self._has_exported = False

    @property
    def name(self) -> str:
        return self._export.name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> bytes | None:
        if self._event_file_pattern and self._model_dir != estimator.model_dir:
            logging.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            self._best_eval_result = self._best_of(os.path.join(self._model_dir, self._event_file_pattern))
        if (self._best_eval_result is not None and self._has_exported
                and not self._compare_fn(best_eval_result=self._best_eval_result, current_eval_result=eval_result)):
            return None
        logging.info("Performing best model export.")
        self._best_eval_result = eval_result
        result = self._export(estimator, export_path, checkpoint_path)
        garbage_collect_exports(export_path, self._exports_to_keep)
        self._has_exported = True
        return result

    def _best_of(self, pattern: str) -> dict | None:
        best = None
        for result in read_eval_results(pattern):
            if best is None or self._compare_fn(best_eval_result=best, current_eval_result=result):
                best = result
        return best
