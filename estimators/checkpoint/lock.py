"""One trainer per model_dir: a JSON lock file naming the holder (host, pid, since) and its last heartbeat.

Only training takes it; evaluate/predict/export in other processes never do. A holder whose process is
gone (same host) or whose heartbeat is older than `stale_after_s` is taken over with a warning.

Races: on local paths (a mounted Drive too) a fresh lock is created with O_EXCL. gs:// has no exclusive
create through tf.io.gfile, so the lock is written and read back: two trainers starting within one
write-and-read round trip of each other can both succeed. The loser finds out at its next heartbeat()
(the file names the other holder) and stops with ModelDirLockedError, so call heartbeat() before each
checkpoint save. Drive syncs between machines with a delay: a trainer on another machine is seen only
once its lock file has synced there.

Storage failing under a held lock (disk full, a model_dir turned read-only, a gs:// 503) is not the
lock's to report: heartbeat() and release() log a warning and carry on, and the checkpoint save that
follows fails with CheckpointSaveError naming the latest good checkpoint. A failed write leaves no
`trainer.lock.tmp*` file behind.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import threading
import time
import uuid
from types import TracebackType
from typing import NamedTuple

import tensorflow as tf
from tensorflow.python.lib.io import file_io

from estimators import log as logging
from estimators.checkpoint import files

LOCK_FILE = "trainer.lock"
_ACTIVE: set[str] = set()  # tokens of the locks this process holds now


class ModelDirLockedError(RuntimeError):
    """Another trainer holds (or has taken over) this model_dir."""


class Holder(NamedTuple):
    host: str
    pid: int
    since: str  # UTC, ISO 8601
    heartbeat: float  # time.time() of the last heartbeat
    token: str

    def describe(self) -> str:
        age = max(0.0, time.time() - self.heartbeat)
        return f"host {self.host}, pid {self.pid}, since {self.since} (last heartbeat {age:.0f} s ago)"


class ModelDirLock:
    """Context manager holding model_dir's trainer lock; beats in a daemon thread every `heartbeat_every_s`."""

    def __init__(self, model_dir: str, stale_after_s: float = 600.0, heartbeat_every_s: float | None = 60.0):
        if heartbeat_every_s is not None and heartbeat_every_s >= stale_after_s:
            raise ValueError(f"heartbeat_every_s ({heartbeat_every_s}) must be shorter than stale_after_s "
                             f"({stale_after_s}), or the lock looks stale while held.")
        self.path = os.path.join(model_dir, LOCK_FILE)
        self.model_dir = model_dir
        self.stale_after_s = stale_after_s
        self.heartbeat_every_s = heartbeat_every_s
        self._mine: Holder | None = None
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lost: ModelDirLockedError | None = None

    def __enter__(self) -> ModelDirLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        """Takes the lock, or raises ModelDirLockedError naming the live holder."""
        if self._mine is not None:
            raise RuntimeError(f"{self.path} is already held by this ModelDirLock.")
        tf.io.gfile.makedirs(self.model_dir)
        current = self._read()
        if isinstance(current, Holder):
            reason = self._stale_reason(current)
            if reason is None:
                raise self._locked(current)
            logging.warning("Taking over the trainer lock %s from %s: %s.", self.path, current.describe(), reason)
        elif current is not None:
            logging.warning("Taking over the trainer lock %s: %s.", self.path, current)
        now = time.time()
        since = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        mine = Holder(socket.gethostname(), os.getpid(), since, now, uuid.uuid4().hex)
        if current is None and files.is_local(self.path):
            self._create_exclusive(mine)
        else:
            self._write(mine)
        back = self._read()
        if not isinstance(back, Holder) or back.token != mine.token:
            raise self._locked(back) if isinstance(back, Holder) else ModelDirLockedError(
                f"Could not take the trainer lock {self.path}: it reads back as {back!r}.")
        self._mine, self._lost = mine, None
        _ACTIVE.add(mine.token)
        if self.heartbeat_every_s is not None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._beat_forever, name="model-dir-lock-heartbeat", daemon=True)
            self._thread.start()

    def heartbeat(self) -> None:
        """Refreshes the heartbeat; raises ModelDirLockedError if another trainer has taken the lock over."""
        if self._lost is not None:
            raise self._lost
        if self._mine is None:
            raise RuntimeError(f"heartbeat() on {self.path}, which this ModelDirLock does not hold.")
        with self._guard:
            try:
                current = self._read()
            except (tf.errors.OpError, OSError) as err:
                self._storage_failed("read", err)
                return
            if not isinstance(current, Holder) or current.token != self._mine.token:
                holder = current.describe() if isinstance(current, Holder) else f"nobody ({current or 'no file'})"
                self._lost = ModelDirLockedError(
                    f"This trainer lost the lock on model_dir {self.model_dir}: {self.path} now names {holder}. "
                    "Two trainers must not write one model_dir; stopping this one.")
                raise self._lost
            beat = self._mine._replace(heartbeat=time.time())
            try:
                self._write(beat)
            except (tf.errors.OpError, OSError) as err:
                self._storage_failed("refresh", err)
                return
            self._mine = beat

    def release(self) -> None:
        """Stops the heartbeat and deletes the lock file if it is still ours (safe to call twice)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        mine, self._mine = self._mine, None
        if mine is None:
            return
        _ACTIVE.discard(mine.token)
        with self._guard:
            try:
                current = self._read()
                if isinstance(current, Holder) and current.token == mine.token:
                    file_io.delete_file(self.path)
            except tf.errors.NotFoundError:
                pass
            except (tf.errors.OpError, OSError) as err:  # never hide the error that ended training
                logging.warning("Could not remove the trainer lock %s (%s); the next trainer takes it over once "
                                "its heartbeat is %.0f s old, or delete it.", self.path, files.first_line(err),
                                self.stale_after_s)

    # -- internals ---------------------------------------------------------------------------------
    def _beat_forever(self) -> None:
        while not self._stop.wait(self.heartbeat_every_s):
            try:
                self.heartbeat()
            except ModelDirLockedError:
                logging.error("%s", self._lost)
                return
            except (tf.errors.OpError, OSError) as err:  # a transient storage error: try again next time
                self._storage_failed("refresh", err)

    def _storage_failed(self, action: str, err: BaseException) -> None:
        logging.warning("Could not %s the trainer lock %s: %s. Training goes on; a checkpoint save that fails the "
                        "same way stops it with the latest good checkpoint named.", action, self.path,
                        files.first_line(err))

    def _stale_reason(self, holder: Holder) -> str | None:
        age = time.time() - holder.heartbeat
        if age > self.stale_after_s:
            return f"no heartbeat for {age:.0f} s (more than {self.stale_after_s:.0f} s)"
        if holder.host == socket.gethostname():
            if holder.pid == os.getpid() and holder.token not in _ACTIVE:
                return "left behind by an earlier run in this process"
            if holder.pid != os.getpid() and not _process_alive(holder.pid):
                return f"process {holder.pid} is no longer running"
        return None

    def _locked(self, holder: Holder) -> ModelDirLockedError:
        return ModelDirLockedError(
            f"model_dir {self.model_dir} is in use by another trainer: {holder.describe()}. Only one train() may "
            f"write a model_dir at a time: stop that trainer, or train into another model_dir. If it is no longer "
            f"running, delete {self.path} (a lock without a heartbeat for {self.stale_after_s:.0f} s is taken over "
            "automatically). evaluate(), predict() and export do not need the lock.")

    def _read(self) -> Holder | str | None:
        """The holder, None when there is no lock file, or a description of an unreadable one."""
        try:
            text = file_io.read_file_to_string(self.path)
        except tf.errors.NotFoundError:
            return None
        try:
            data = json.loads(text)
            return Holder(str(data["host"]), int(data["pid"]), str(data["since"]), float(data["heartbeat"]),
                          str(data["token"]))
        except (ValueError, KeyError, TypeError):
            return f"unreadable lock file ({len(text)} bytes)"

    def _write(self, holder: Holder) -> None:
        """Replaces the lock file (through a temporary file where the filesystem renames atomically).

        A failed write removes its temporary file: a full disk leaves a 0-byte one otherwise.
        """
        text = json.dumps(holder._asdict())
        if not file_io.has_atomic_move(self.path):
            file_io.write_string_to_file(self.path, text)
            return
        temp = f"{self.path}.tmp{uuid.uuid4().hex}"
        try:
            file_io.write_string_to_file(temp, text)
            file_io.rename(temp, self.path, overwrite=True)
        except BaseException:
            try:
                file_io.delete_file(temp)
            except (tf.errors.OpError, OSError):
                pass  # never written, or the filesystem refuses even that: remove_leftovers() tries later
            raise

    def _create_exclusive(self, holder: Holder) -> None:
        try:
            fd = os.open(self.path.removeprefix("file://"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            current = self._read()
            raise self._locked(current) if isinstance(current, Holder) else ModelDirLockedError(
                f"Another trainer created {self.path} at the same moment; retry.") from None
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(holder._asdict()))


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True
