"""What a run prints to the terminal: how much (absl's --verbosity), TensorFlow's start-up noise, errors.

--verbosity (-v)   progress display   our INFO lines   TensorFlow's C++ and Python logs, tracebacks
  -2 and below     no                 no               no (errors only, as one line)
  -1               no                 no               no (warnings and errors)
   0 (default)     yes                yes, plain       no
   1 and above     yes                yes, absl format yes
An explicit TF_CPP_MIN_LOG_LEVEL in the environment is always honoured.
This module imports no TensorFlow: main.py calls quiet_tensorflow_startup before anything else does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence

DEBUG = 1  # absl's verbosity for DEBUG: from here on everything TensorFlow says is shown
_VERBOSITY_NAMES = ("v", "verbosity")
_NOISY_MODULES = r"(tensorflow|keras|tf_keras|absl|google\.protobuf)(\.|$)"


def verbosity_from_argv(argv: Sequence[str]) -> int:
    """absl's -v / --verbosity as given on the command line (0, absl's default, when absent or unreadable).

    Read before flags are parsed, since TensorFlow's C++ logging is set when it is first imported.
    """
    value = None
    args = list(argv[1:])
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if not arg.startswith("-"):
            continue
        name, has_value, given = arg.lstrip("-").partition("=")
        if name in _VERBOSITY_NAMES:
            value = given if has_value else (args[index + 1] if index + 1 < len(args) else "")
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0


@contextlib.contextmanager
def _stderr_captured() -> Iterator[tempfile.SpooledTemporaryFile]:
    """Points file descriptor 2 (where TensorFlow's C++ code writes) at a temporary file meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def quiet_tensorflow_startup(argv: Sequence[str]) -> None:
    """Below --verbosity=1, imports TensorFlow with its C++ start-up lines hidden.

    Sets TF_CPP_MIN_LOG_LEVEL=2 (C++ errors still show) unless the environment sets it, and swallows
    what the import writes to stderr anyway (TF 2.21 prints oneDNN and absl::InitializeLog notices
    whatever the level). If the import fails, what it wrote is shown, and the import error is left
    for `estimators` to explain.
    """
    if "tensorflow" in sys.modules or verbosity_from_argv(argv) >= DEBUG:
        return
    if os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2") in ("0", "1"):
        return  # asked for explicitly
    with _stderr_captured() as captured:
        try:
            import tensorflow  # noqa: F401
        except ImportError:
            failed = True
        else:
            failed = False
        captured.seek(0)
        text = captured.read()
    if failed:
        sys.stderr.write(text.decode(errors="replace"))


class _PlainFormatter(logging.Formatter):
    """INFO as the bare message; warnings and errors prefixed with their level."""

    def format(self, record: logging.LogRecord) -> str:
        message = super().format(record)
        if record.levelno >= logging.ERROR:
            return f"error: {message}"
        if record.levelno >= logging.WARNING:
            return f"warning: {message}"
        return message


class _LibraryChatterFilter(logging.Filter):
    """Drops records below ERROR logged from inside TensorFlow or Keras (some of it logs through absl)."""

    def __init__(self, folders: tuple[str, ...]):
        super().__init__()
        self._folders = folders

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not record.pathname.startswith(self._folders)


_chatter_filter: _LibraryChatterFilter | None = None


def _library_folders() -> tuple[str, ...]:
    folders = []
    for name in ("tensorflow", "keras", "tf_keras"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            folders.append(os.path.dirname(module.__file__) + os.sep)
    return tuple(folders)


def configure_output(verbosity: int) -> None:
    """After flags are parsed: the progress display, TensorFlow's Python logs and warnings, log format."""
    from absl import logging as absl_logging

    from estimators.training import progress_display

    progress_display.configure(enabled=verbosity >= 0)
    verbose = verbosity >= DEBUG
    logging.getLogger("tensorflow").setLevel(logging.DEBUG if verbose else logging.ERROR)
    warnings.filterwarnings("default" if verbose else "ignore", module=_NOISY_MODULES)
    handler = absl_logging.get_absl_handler()
    handler.setFormatter(absl_logging.PythonFormatter() if verbose else _PlainFormatter("%(message)s"))
    global _chatter_filter
    if _chatter_filter is not None:
        handler.removeFilter(_chatter_filter)
        _chatter_filter = None
    if not verbose:
        _chatter_filter = _LibraryChatterFilter(_library_folders())
        handler.addFilter(_chatter_filter)


def user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that are the user's to fix: reported as one line, not a traceback (below --verbosity=1)."""
    import tensorflow as tf

    return ValueError, RuntimeError, OSError, FloatingPointError, tf.errors.OpError


def error_line(err: BaseException) -> str:
    """"error: <message>" for sys.exit, which prints it once to stderr."""
    message = getattr(err, "message", None) or str(err) or type(err).__name__
    return f"error: {message}"
