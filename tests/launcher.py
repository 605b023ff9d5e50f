"""Starts the tests' Python child processes forked from a warm process that has imported TensorFlow once.

A child that imports TensorFlow costs ~5.5 CPU-seconds before its first line; the suite starts well over
a hundred. `run` and `popen` take subprocess's arguments for `[sys.executable, script | -c code | -m module,
*args]` and fork the child from a zygote (one per pytest process and environment) that has imported
tensorflow and keras: the child gets its own pid, argv, environment, working
directory, sys.path[0], stdin/stdout/stderr, default signal handlers, and Python's own exit (non-daemon
threads joined, atexit run, exit status as a plain interpreter's). A zygote serves one environment (TensorFlow
reads variables when imported), from that environment's third child on; the first two, and anything else
(other programs or interpreter flags, `input=` or stdin=PIPE, TESTS_LAUNCHER=subprocess), go to subprocess.
What a forked child cannot show, tests keep plain processes for: a fresh interpreter's start-up (TensorFlow
not yet imported, its start-up lines, variables a script sets before importing it), its exit, its memory
peak, and processes that must differ as separate interpreters do (hash seeds: multi-worker clusters).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT
# TensorFlow reads much of its environment when imported (PYTHONPATH, TF_USE_LEGACY_KERAS, the GCS file system's
# proxy and timeouts, ...): a zygote serves one environment, these variables aside, read only later or by us
_RUNTIME_ENV = frozenset({"PYTEST_CURRENT_TEST", "TF_CONFIG", "PYTHONUNBUFFERED"})
_ZYGOTE_AFTER = 2  # an environment's first children start as plain processes; a zygote pays off from the third
_MAX_ZYGOTES = 3  # each holds an imported TensorFlow (~0.5 GB)
_PRELOAD = ("tensorflow", "keras")  # not the project: a child imports it from its own sys.path
_START_TIMEOUT_S = 300


def _forkable(args: Any, kwargs: dict) -> bool:
    if os.environ.get("TESTS_LAUNCHER") == "subprocess" or not hasattr(os, "fork") or kwargs.get("input"):
        return False
    if kwargs.get("stdin") == PIPE:
        return False
    if not isinstance(args, (list, tuple)) or len(args) < 2 or str(args[0]) != sys.executable:
        return False
    first = str(args[1])
    return first in ("-c", "-m") and len(args) >= 3 or not first.startswith("-")


# -- client side -----------------------------------------------------------------------------------------------
class _Zygote:
    """A warm process listening on a Unix socket; started on first use, ended with the pytest process."""

    def __init__(self, env: dict):
        self._dir = tempfile.mkdtemp(prefix="zygote-")
        self.path = os.path.join(self._dir, "socket")
        self._log = open(os.path.join(self._dir, "log"), "w")  # noqa: SIM115 - the zygote's lifetime
        self._process = subprocess.Popen([sys.executable, os.path.abspath(__file__), self.path], cwd=ROOT, env=env,
                                         stdin=DEVNULL, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not os.path.exists(self.path + ".ready"):
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the test launcher's zygote did not start: {open(self._log.name).read()[-2000:]}")
            time.sleep(0.05)

    def alive(self) -> bool:
        return self._process.poll() is None

    def close(self) -> None:
        self._process.kill()
        self._process.wait()
        self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)


_zygotes: dict[tuple, _Zygote] = {}
_uses: dict[tuple, int] = {}
_zygotes_lock = threading.Lock()


def _key(env: dict) -> tuple:
    return tuple(sorted((name, value) for name, value in env.items() if name not in _RUNTIME_ENV))


def _zygote(env: dict) -> _Zygote | None:
    """The zygote for `env`, started on its environment's third child; None before (start a plain process)."""
    key = _key(env)
    with _zygotes_lock:
        _uses[key] = _uses.get(key, 0) + 1
        if key in _zygotes and not _zygotes[key].alive():
            _zygotes.pop(key).close()
            _uses[key] = -(1 << 30)  # a zygote that died: this environment's children start plainly from now on
        if key not in _zygotes:
            if _uses[key] <= _ZYGOTE_AFTER:
                return None
            if not _zygotes:
                atexit.register(lambda: [z.close() for z in _zygotes.values()])
            if len(_zygotes) >= _MAX_ZYGOTES:
                _zygotes.pop(next(iter(_zygotes))).close()
            try:
                _zygotes[key] = _Zygote(env)
            except (OSError, RuntimeError):
                _uses[key] = -(1 << 30)  # could not start one: plain processes, as without the launcher
                return None
        _zygotes[key] = _zygotes.pop(key)  # most recently used last
        return _zygotes[key]


def _child_fd(spec: Any, default: int, mode: str, stdout_fd: int | None = None) -> tuple[int, int | None]:
    """(fd for the child, our end of a pipe or None) for subprocess's stdin/stdout/stderr argument."""
    if spec is None:
        return default, None
    if spec == DEVNULL:
        return os.open(os.devnull, os.O_RDWR), None
    if spec == STDOUT and stdout_fd is not None:
        return stdout_fd, None
    if spec == PIPE:
        read, write = os.pipe()
        return (read, write) if mode == "r" else (write, read)
    return (spec if isinstance(spec, int) else spec.fileno()), None


class Popen:
    """subprocess.Popen's interface (pid, stdout/stderr pipes, poll, wait, signals, communicate) for a forked child."""

    def __init__(self, args: list, *, zygote: _Zygote, cwd: Any = None, env: dict | None = None, stdin: Any = None,
                 stdout: Any = None, stderr: Any = None, text: bool = False, universal_newlines: bool = False):
        self.args = [str(a) for a in args]
        self.returncode: int | None = None
        self._text = text or universal_newlines
        env = dict(os.environ if env is None else env)
        stdin = DEVNULL if stdin is None else stdin
        stdin_fd, _ = _child_fd(stdin, 0, "r")
        stdout_fd, stdout_ours = _child_fd(stdout, 1, "w")
        stderr_fd, stderr_ours = _child_fd(stderr, 2, "w", stdout_fd)
        request = {"argv": self.args[1:], "env": env, "cwd": os.path.abspath(str(cwd or os.getcwd()))}
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.connect(zygote.path)
        socket.send_fds(self._socket, [json.dumps(request).encode() + b"\n"], [stdin_fd, stdout_fd, stderr_fd])
        for fd, ours, given in ((stdin_fd, None, stdin), (stdout_fd, stdout_ours, stdout),
                                (stderr_fd, stderr_ours, stderr)):
            if ours is not None or given == DEVNULL:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._buffer = b""
        self.pid = json.loads(self._line(None))["pid"]
        self.stdin = None
        self.stdout = self._wrap(stdout_ours)
        self.stderr = self._wrap(stderr_ours)

    def _wrap(self, fd: int | None) -> Any:
        if fd is None:
            return None
        return open(fd, encoding="utf-8", errors="replace") if self._text else open(fd, "rb")  # noqa: SIM115

    def _line(self, timeout: float | None) -> bytes:
        """The zygote's next message; TimeoutError after `timeout` seconds without one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._socket], [], [], wait)[0]:
                raise TimeoutError
            chunk = self._socket.recv(4096)
            if not chunk:  # the zygote's waiter died: not expected
                raise RuntimeError(f"lost the child process of {self.args}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(TimeoutError):
                self._take_status(0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            try:
                self._take_status(timeout)
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout) from None
        return self.returncode

    def _take_status(self, timeout: float | None) -> None:
        self.returncode = json.loads(self._line(timeout))["status"]
        self._socket.close()

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[Any, Any]:
        """Reads stdout and stderr to their end and waits; TimeoutExpired (output so far in it) after `timeout`."""
        streams = {name: getattr(self, name) for name in ("stdout", "stderr") if getattr(self, name) is not None}
        chunks: dict[str, list[bytes]] = {name: [] for name in streams}

        def read(name):
            fd = streams[name].fileno()
            while chunk := os.read(fd, 65536):
                chunks[name].append(chunk)

        readers = [threading.Thread(target=read, args=(name,), daemon=True) for name in streams]
        for reader in readers:
            reader.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        for reader in readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

        def joined(name):
            if name not in chunks:
                return None
            data = b"".join(chunks[name])
            return data.decode("utf-8", "replace").replace("\r\n", "\n") if self._text else data

        if any(reader.is_alive() for reader in readers):
            raise subprocess.TimeoutExpired(self.args, timeout, output=joined("stdout"), stderr=joined("stderr"))
        for stream in streams.values():
            stream.close()
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return joined("stdout"), joined("stderr")

    def __enter__(self) -> Popen:
        return self

    def __exit__(self, *exc: Any) -> None:
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


def popen(args: list, **kwargs: Any) -> Any:
    """A forked child (Popen above) where `args` runs Python code and a zygote serves its environment;
    subprocess.Popen otherwise."""
    zygote = _forkable(args, kwargs) and _zygote(dict(os.environ if kwargs.get("env") is None else kwargs["env"]))
    return Popen(args, zygote=zygote, **kwargs) if zygote else subprocess.Popen(args, **kwargs)


def run(args: list, *, capture_output: bool = False, timeout: float | None = None, check: bool = False,
        **kwargs: Any) -> subprocess.CompletedProcess:
    """subprocess.run's contract, the child forked from the zygote where `args` runs Python code."""
    zygote = _forkable(args, kwargs) and _zygote(dict(os.environ if kwargs.get("env") is None else kwargs["env"]))
    if not zygote:
        return subprocess.run(args, capture_output=capture_output, timeout=timeout, check=check, **kwargs)
    if capture_output:
        kwargs.update(stdout=PIPE, stderr=PIPE)
    process = Popen(args, zygote=zygote, **kwargs)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    if check and process.returncode:
        raise subprocess.CalledProcessError(process.returncode, process.args, out, err)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


# -- zygote side ---------------------------------------------------------------------------------------------------
def _serve(path: str) -> None:
    """Imports the preload, then forks a waiter per request (the waiter forks the child and reports its end)."""
    sys.path.pop(0)  # this file's folder, not on a child's path
    for module in _PRELOAD:
        __import__(module)
    sys.path.insert(0, "")  # the place each child fills as its own interpreter would (script folder, '' or cwd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    parent = os.getppid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    server.settimeout(5.0)
    open(path + ".ready", "w").close()
    while True:
        try:
            connection, _ = server.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the pytest process is gone (killed): so is the need for a zygote
                os._exit(0)
            continue
        connection.settimeout(None)
        message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
        while not message.endswith(b"\n"):
            message += connection.recv(1 << 20)
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            server.close()
            _wait_for_child(connection, json.loads(message), fds)
        connection.close()
        for fd in fds:
            os.close(fd)


def _wait_for_child(connection: socket.socket, request: dict, fds: list[int]) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        connection.close()
        _child(request, fds)
    for fd in fds:
        os.close(fd)
    connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    connection.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    os._exit(0)


def _child(request: dict, fds: list[int]) -> None:
    """Becomes `python <argv>` as far as the program can tell, then exits as Python would."""
    try:
        _become(request, fds)
    except BaseException as error:  # noqa: BLE001 - a child that cannot start says why and fails
        os.write(2, f"launcher: cannot start {request['argv']}: {error!r}\n".encode())
        os._exit(1)
    _run(request["argv"], request["cwd"])


def _become(request: dict, fds: list[int]) -> None:
    """The child's signals, stdio, environment, working directory and random state."""
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    if request["env"].get("PYTHONUNBUFFERED"):
        sys.stdout.reconfigure(write_through=True)
        sys.stderr.reconfigure(write_through=True)
    if "numpy" in sys.modules:  # its global random state is not reseeded at fork (Python's `random` is)
        sys.modules["numpy"].random.seed()


def _run(argv: list[str], cwd: str) -> None:
    """Runs the program as `python <argv>` would, then ends the process with its exit status."""
    code = 0
    try:
        import runpy

        if argv[0] == "-c":
            sys.argv, sys.path[0] = ["-c", *argv[2:]], ""
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(argv[1], "<string>", "exec"), main.__dict__)
        elif argv[0] == "-m":
            sys.argv, sys.path[0] = [argv[1], *argv[2:]], cwd
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(argv[0])
            sys.argv, sys.path[0] = argv, os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:  # noqa: BLE001 - printed as the interpreter prints it
        sys.excepthook(*sys.exc_info())
        code = 1
    _finish()
    os._exit(code)


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _finish() -> None:
    """Python's end: non-daemon threads joined, atexit handlers run, output flushed."""
    threading._shutdown()  # noqa: SLF001 - what the interpreter calls at exit
    atexit._run_exitfuncs()  # noqa: SLF001
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


if __name__ == "__main__":
    _serve(sys.argv[1])
