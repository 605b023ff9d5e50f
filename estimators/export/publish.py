"""Publishing an export: export_dir_base/<timestamp> appears only complete, on every filesystem, or not at all.

The SavedModel is written to `temp-<timestamp>` beside its final place (TensorFlow Serving ignores folders
whose name is not a number). On a local filesystem a rename then publishes it at once. On gs:// a rename is a
copy and a delete per object, so a failure part-way would leave a version folder that looks like a model and
does not load; there every file is copied into the version folder first, checked (names and sizes), and
saved_model.pb (what makes a folder a SavedModel to TensorFlow and to servers) is copied last. A failure
removes what this export wrote. Before anything is written, a claim `temp-<timestamp>.export-in-progress`
(host, pid) is put beside the temporary; once written, the temporary gets the same owner file inside, copied
first on gs://. Later exports remove the folders of writers that are gone (on this host: no such process;
elsewhere: an hour old), so an export killed while writing its SavedModel is cleaned up by the next one, except a
version already holding its model file (published whole), which only loses the owner file; a temporary with
neither file (left by an older version of this code) is removed once its timestamp is an hour old.
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Callable
from urllib.parse import urlparse

import tensorflow as tf

from estimators import log as logging

OWNER = ".export-in-progress"  # host, pid and start time of the export writing the folder holding it
_MODEL_FILES = (tf.saved_model.SAVED_MODEL_FILENAME_PB, tf.saved_model.SAVED_MODEL_FILENAME_PBTXT)
_STALE_AFTER_S = 3600.0  # a foreign host's unfinished export is taken as dead after this long


class ExportPublishError(RuntimeError):
    """The export was written but could not be published complete; nothing of it was left behind."""


def publish_export(export_dir_base: str, write: Callable[[str], None], assets_extra: dict | None) -> str:
    """`write(temporary)` then assets_extra into temp-<timestamp>, published as <timestamp> only when complete;
    on any failure what this export wrote is removed and nothing is published. Returns the final directory."""
    tf.io.gfile.makedirs(export_dir_base)
    remove_abandoned(export_dir_base)
    final = timestamped_dir(export_dir_base)
    temporary = os.path.join(export_dir_base, "temp-" + os.path.basename(final))
    claim = temporary + OWNER  # beside the temporary: write() needs a folder that does not exist yet
    published = False
    try:
        _write_owner_file(claim)  # before anything else, so that a kill while writing is known abandoned
        write(temporary)  # into a folder that does not exist yet (TF1's SavedModel Builder refuses any other)
        _write_owner(temporary)
        for relative, source in (assets_extra or {}).items():
            destination = os.path.join(temporary, "assets.extra", relative)
            tf.io.gfile.makedirs(os.path.dirname(destination))
            tf.io.gfile.copy(source, destination, overwrite=True)
        _move(temporary, final)
        published = True
    except BaseException as err:
        for folder in (temporary, final):
            _remove_quietly(folder)
        if isinstance(err, tf.errors.OpError) and _is_remote(export_dir_base):
            raise ExportPublishError(
                f"Could not publish the export {final}: {_first_line(err)}. Nothing of it was left in "
                f"{export_dir_base}; export again (the checkpoint is unchanged).") from err
        raise
    finally:
        if published:
            _remove_quietly(temporary)
        _remove_file_quietly(claim)
    return final


def timestamped_dir(export_dir_base: str) -> str:
    """export_dir_base/<seconds since epoch>, one past the newest taken one if that second is taken."""
    version = int(time.time())
    while tf.io.gfile.exists(os.path.join(export_dir_base, str(version))):
        version += 1
    return os.path.join(export_dir_base, str(version))


def remove_abandoned(export_dir_base: str) -> list[str]:
    """Removes the folders of exports whose writer is gone (temporaries and part-copied versions); returns them."""
    removed = []
    entries = [entry.rstrip("/") for entry in tf.io.gfile.listdir(export_dir_base)]
    claims = {name[:-len(OWNER)] for name in entries if name.startswith("temp-") and name.endswith(OWNER)}
    for name in entries:
        folder = os.path.join(export_dir_base, name)
        if name in claims or name.endswith(OWNER):
            continue  # a temporary still being written (its claim beside it), or a claim: decided below
        owner = os.path.join(folder, OWNER)
        if tf.io.gfile.exists(owner):
            if not _owner_gone(owner):
                continue
        elif not _old_temporary(name):
            continue
        if name.isdigit() and any(tf.io.gfile.exists(os.path.join(folder, f)) for f in _MODEL_FILES):
            tf.io.gfile.remove(owner)  # published whole (the model file comes last); only the owner file was left
            continue
        _remove_quietly(folder)
        removed.append(folder)
        logging.warning("Removed %s, left by an export that did not finish.", folder)
    for name in sorted(claims):  # exports killed while writing their SavedModel
        claim = os.path.join(export_dir_base, name + OWNER)
        if not _owner_gone(claim):
            continue
        folder = os.path.join(export_dir_base, name)
        if name in entries:
            _remove_quietly(folder)
            removed.append(folder)
            logging.warning("Removed %s, left by an export killed while writing it.", folder)
        _remove_file_quietly(claim)
    return removed


def _move(temporary: str, final: str) -> None:
    if not _is_remote(final):
        tf.io.gfile.rename(temporary, final)  # atomic on a local filesystem
        tf.io.gfile.remove(os.path.join(final, OWNER))
        return
    files = _files(temporary)
    model_files = [f for f in files if f in _MODEL_FILES]
    if not model_files:
        raise ExportPublishError(f"{temporary} holds no {' or '.join(_MODEL_FILES)}: the SavedModel was not written.")
    # The owner file goes first (a copy killed part-way is then known abandoned); the model file goes last,
    # once every other file is checked whole.
    others = sorted(f for f in files if f not in model_files and f != OWNER)
    _copy(temporary, final, [OWNER, *others])
    _check_copied(temporary, final, others)
    _copy(temporary, final, model_files)
    tf.io.gfile.remove(os.path.join(final, OWNER))


def _copy(source: str, destination: str, relatives: list[str]) -> None:
    for relative in relatives:
        target = os.path.join(destination, relative)
        tf.io.gfile.makedirs(os.path.dirname(target))
        tf.io.gfile.copy(os.path.join(source, relative), target, overwrite=True)


def _check_copied(source: str, destination: str, relatives: list[str]) -> None:
    """Every file arrived whole before the model file makes the folder a SavedModel."""
    for relative in relatives:
        expected = tf.io.gfile.stat(os.path.join(source, relative)).length
        copied = os.path.join(destination, relative)
        if not tf.io.gfile.exists(copied) or tf.io.gfile.stat(copied).length != expected:
            raise ExportPublishError(f"{copied} was not copied whole ({expected} bytes expected).")


def _files(folder: str) -> list[str]:
    """Paths of the files under `folder`, relative to it."""
    found = []
    for directory, _, names in tf.io.gfile.walk(folder):
        for name in names:
            found.append(os.path.relpath(os.path.join(directory, name), folder))
    return found


def _old_temporary(name: str) -> bool:
    """A temp-<timestamp> folder without an owner file (its writer died while writing) older than an hour."""
    stamp = name[len("temp-"):] if name.startswith("temp-") else ""
    return stamp.isdigit() and time.time() - int(stamp) > _STALE_AFTER_S


def _write_owner(folder: str) -> None:
    _write_owner_file(os.path.join(folder, OWNER))


def _write_owner_file(path: str) -> None:
    with tf.io.gfile.GFile(path, "w") as f:
        f.write(f"{socket.gethostname()} {os.getpid()} {time.time():.0f}\n")


def _remove_file_quietly(path: str) -> None:
    try:
        tf.io.gfile.remove(path)
    except tf.errors.NotFoundError:
        pass
    except tf.errors.OpError as err:
        logging.warning("Could not remove %s: %s", path, _first_line(err))


def _owner_gone(owner: str) -> bool:
    """Whether the export that wrote `owner` is no longer running (unreadable or malformed: taken as gone)."""
    try:
        with tf.io.gfile.GFile(owner) as f:
            host, pid, started = f.read().split()
        pid_number, started_at = int(pid), float(started)
    except (tf.errors.OpError, ValueError):
        return True
    if host != socket.gethostname():
        return time.time() - started_at > _STALE_AFTER_S
    if pid_number == os.getpid():
        return False
    try:
        os.kill(pid_number, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _remove_quietly(folder: str) -> None:
    try:
        if tf.io.gfile.exists(folder):
            tf.io.gfile.rmtree(folder)
    except tf.errors.OpError as err:
        logging.warning("Could not remove %s: %s", folder, _first_line(err))


def _is_remote(path: str) -> bool:
    return bool(urlparse(path).scheme)


def _first_line(err: BaseException) -> str:
    """The error's first line, without TensorFlow's "{{function_node __wrapped__SaveV2_...}}" prefix."""
    message = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", getattr(err, "message", None) or str(err))
    return message.strip().splitlines()[0] if message.strip() else type(err).__name__
