"""flags.txt in model_dir: the flags of the run that trained it, usable again as --flagfile."""

from __future__ import annotations

import datetime
import os

import tensorflow as tf
from absl import flags

from estimators import SavingListener

FILE_NAME = "flags.txt"
WRITTEN_BY = ("train", "train_and_evaluate")  # runs that change the model; others only read it


def flag_lines(flag_values: flags.FlagValues, defining_flag: str) -> list[str]:
    """"--name=value" for every flag defined by the module that defines `defining_flag` (unset ones left out)."""
    module = flag_values.find_module_defining_flag(defining_flag)
    return [line for flag in flag_values.get_flags_for_module(module) if (line := flag.serialize())]


def write_flags_file(model_dir: str, lines: list[str], mode: str) -> str | None:
    """Writes model_dir/flags.txt for training runs (whole or not at all); returns its path, or None."""
    if mode not in WRITTEN_BY:
        return None
    tf.io.gfile.makedirs(model_dir)
    path = os.path.join(model_dir, FILE_NAME)
    stamp = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    text = f"# main.py flags of the run started {stamp}; rerun with --flagfile={path}\n" + "\n".join(lines) + "\n"
    partial = f"{path}.tmp-{os.getpid()}"
    with tf.io.gfile.GFile(partial, "w") as f:
        f.write(text)
    tf.io.gfile.rename(partial, path, overwrite=True)
    return path


class FlagsFileListener(SavingListener):
    """Writes flags.txt with the run's first checkpoint: a run that fails before one leaves model_dir as it was."""

    def __init__(self, model_dir: str, lines: list[str], mode: str):
        self._args: tuple | None = (model_dir, lines, mode)

    def after_save(self, step: int, path: str | None) -> None:
        if path is not None and self._args is not None:
            write_flags_file(*self._args)
            self._args = None
