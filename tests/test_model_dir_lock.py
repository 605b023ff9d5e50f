"""One trainer per model_dir: a second is refused with the holder named; dead or silent holders are taken over."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
import types

import pytest

from estimators.checkpoint import lock as lock_module
from estimators.checkpoint.lock import LOCK_FILE, ModelDirLock, ModelDirLockedError
from tests import launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Takes the lock in another process; argv: model_dir, then "hold" (exit without releasing, as if killed) or "try".
_OTHER_TRAINER = r"""
import os, sys
from estimators.checkpoint.lock import ModelDirLock, ModelDirLockedError
lock = ModelDirLock(sys.argv[1], heartbeat_every_s=None)
try:
    lock.acquire()
except ModelDirLockedError as err:
    print(err, flush=True)
    sys.exit(3)
print(os.getpid(), flush=True)
if sys.argv[2] == "hold":
    os._exit(0)  # no release: the lock file stays behind, naming a process that is gone
lock.release()
"""


def _other_trainer(model_dir, action: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p),
               TF_CPP_MIN_LOG_LEVEL="3")
    return launcher.run([sys.executable, "-c", _OTHER_TRAINER, str(model_dir), action], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def frozen_clock(monkeypatch):
    """The lock module's clock stands still, so an age written into a lock file is the age the lock reads."""
    now = time.time()
    monkeypatch.setattr(lock_module, "time", types.SimpleNamespace(time=lambda: now))
    return now


def _write_lock(model_dir, host="other-host", pid=4242, age_s=0.0, token="someone-else", now=None) -> None:
    now = time.time() if now is None else now
    holder = {"host": host, "pid": pid, "since": "2030-01-02T03:04:05Z", "heartbeat": now - age_s,
              "token": token}
    (model_dir / LOCK_FILE).write_text(json.dumps(holder))


def _holder(model_dir) -> dict:
    return json.loads((model_dir / LOCK_FILE).read_text())


def test_a_second_trainer_in_another_process_is_refused_naming_the_holder(tmp_path):
    with ModelDirLock(str(tmp_path), heartbeat_every_s=None):
        done = _other_trainer(tmp_path, "try")
    assert done.returncode == 3, done.stderr[-2000:]
    assert f"is in use by another trainer: host {socket.gethostname()}, pid {os.getpid()}, since " in done.stdout
    assert "stop that trainer, or train into another model_dir" in done.stdout
    assert "evaluate(), predict() and export do not need the lock" in done.stdout


def test_a_killed_trainers_lock_is_taken_over_with_a_warning(tmp_path, caplog):
    done = _other_trainer(tmp_path, "hold")
    assert done.returncode == 0, done.stderr[-2000:]
    dead_pid = int(done.stdout.split()[-1])
    assert _holder(tmp_path)["pid"] == dead_pid
    with caplog.at_level(logging.WARNING, logger="absl"), ModelDirLock(str(tmp_path), heartbeat_every_s=None):
        assert _holder(tmp_path)["pid"] == os.getpid()
    assert f"process {dead_pid} is no longer running" in caplog.text


def test_a_live_trainer_on_another_host_is_refused(tmp_path, frozen_clock):
    _write_lock(tmp_path, age_s=30, now=frozen_clock)
    with pytest.raises(ModelDirLockedError, match=r"host other-host, pid 4242, since 2030-01-02T03:04:05Z "
                                                  r"\(last heartbeat 30 s ago\).*If it is no longer running, delete"):
        ModelDirLock(str(tmp_path)).acquire()
    assert _holder(tmp_path)["token"] == "someone-else"


def test_a_holder_without_a_recent_heartbeat_is_taken_over_with_a_warning(tmp_path, caplog, frozen_clock):
    _write_lock(tmp_path, age_s=700, now=frozen_clock)
    with caplog.at_level(logging.WARNING, logger="absl"), \
            ModelDirLock(str(tmp_path), stale_after_s=600, heartbeat_every_s=None):
        assert _holder(tmp_path)["host"] == socket.gethostname()
    assert "Taking over the trainer lock" in caplog.text and "no heartbeat for 700 s" in caplog.text


def test_an_unreadable_lock_file_is_taken_over_with_a_warning(tmp_path, caplog):
    (tmp_path / LOCK_FILE).write_text("{half a lock")
    with caplog.at_level(logging.WARNING, logger="absl"), ModelDirLock(str(tmp_path), heartbeat_every_s=None):
        assert _holder(tmp_path)["pid"] == os.getpid()
    assert "unreadable lock file" in caplog.text


def test_a_lock_left_by_an_earlier_run_with_this_pid_is_taken_over(tmp_path, caplog):
    """A restarted container can give the new process the old one's pid: that lock is not alive."""
    _write_lock(tmp_path, host=socket.gethostname(), pid=os.getpid(), token="from-before-the-restart")
    with caplog.at_level(logging.WARNING, logger="absl"), ModelDirLock(str(tmp_path), heartbeat_every_s=None):
        pass
    assert "left behind by an earlier run in this process" in caplog.text


def test_a_second_lock_in_the_same_process_is_refused(tmp_path):
    with ModelDirLock(str(tmp_path), heartbeat_every_s=None):
        with pytest.raises(ModelDirLockedError, match=f"pid {os.getpid()}"):
            ModelDirLock(str(tmp_path), heartbeat_every_s=None).acquire()


def test_leaving_the_with_block_releases_the_lock_even_on_error(tmp_path):
    with pytest.raises(KeyError), ModelDirLock(str(tmp_path), heartbeat_every_s=None):
        raise KeyError("training failed")
    assert not (tmp_path / LOCK_FILE).exists()
    with ModelDirLock(str(tmp_path), heartbeat_every_s=None):  # the next trainer gets in
        assert (tmp_path / LOCK_FILE).exists()


def test_heartbeat_finds_out_when_another_trainer_took_over(tmp_path):
    lock = ModelDirLock(str(tmp_path), heartbeat_every_s=None)
    lock.acquire()
    lock.heartbeat()
    _write_lock(tmp_path, token="the-race-winner")  # e.g. both started at once on gs://
    with pytest.raises(ModelDirLockedError, match="lost the lock .* now names host other-host, pid 4242"):
        lock.heartbeat()
    lock.release()
    assert _holder(tmp_path)["token"] == "the-race-winner", "release deleted another trainer's lock"


def test_the_heartbeat_thread_keeps_the_lock_fresh(tmp_path):
    with ModelDirLock(str(tmp_path), stale_after_s=60, heartbeat_every_s=0.05):
        first = _holder(tmp_path)["heartbeat"]
        deadline = time.monotonic() + 30
        while _holder(tmp_path)["heartbeat"] == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _holder(tmp_path)["heartbeat"] > first


def test_a_heartbeat_interval_as_long_as_the_staleness_limit_is_refused(tmp_path):
    with pytest.raises(ValueError, match="heartbeat_every_s .* must be shorter than stale_after_s"):
        ModelDirLock(str(tmp_path), stale_after_s=60, heartbeat_every_s=60)
