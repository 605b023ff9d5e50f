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
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence

USAGE = 2  # exit status for a command line that is wrong whatever the machine (as argparse and absl's UsageError)
DEBUG = 1  # absl's verbosity for DEBUG: from here on everything TensorFlow says is shown
_VERBOSITY_NAMES = ("v", "verbosity")
HELP_FLAGS = ("help", "helpshort", "helpfull", "helpxml", "?")  # absl's: each prints, then exits 1
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


def asked_for_help(argv: Sequence[str]) -> bool:
    """Whether the command line asks for absl's help (--help, -?, --helpfull, ...) before any `--`."""
    for arg in argv[1:]:
        if arg == "--":
            return False
        if arg.startswith("-") and arg.lstrip("-").partition("=")[0] in HELP_FLAGS:
            return True
    return False


def quiet_tensorflow_startup(argv: Sequence[str], verbosity: int | None = None) -> None:
    """Below --verbosity=1, imports TensorFlow with its C++ start-up lines hidden.

    Sets TF_CPP_MIN_LOG_LEVEL=2 (C++ errors still show) unless the environment sets it, and swallows
    what the import writes to stderr anyway (TF 2.21 prints oneDNN and absl::InitializeLog notices
    whatever the level). If the import fails, what it wrote is shown, and the import error is left
    for `estimators` to explain.
    """
    if verbosity is None:
        verbosity = verbosity_from_argv(argv)
    if "tensorflow" in sys.modules or verbosity >= DEBUG:
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


def require_tensorflow() -> None:
    """Exits with one line (status 1) naming the fix when TensorFlow is missing or too old."""
    try:
        from estimators._tf_check import require_tensorflow as check  # the imported module itself

        check()
    except ImportError as err:
        sys.exit(f"error: {err}")


_FLAGFILE_PREFIXES = ("--flagfile=", "-flagfile=")


def flagfile_cycle(argv: Sequence[str]) -> list[str] | None:
    """The chain of flagfiles (as written) ending in one that includes a file already being read; None if none.

    absl prints a warning for such a file, skips the inclusion and goes on with the flags it has: a
    flagfile that includes itself would then run main.py's default job. Files are compared by their real
    path, so `./a.txt` including `a.txt` is found too (absl compares names, and would recurse until
    Python's recursion limit). Files that cannot be read are left for absl to report.
    """
    def walk(name: str, chain: list[tuple[str, str]]) -> list[str] | None:
        real = os.path.realpath(name)
        if any(seen == real for _, seen in chain):
            return [shown for shown, _ in chain] + [name]
        try:
            with open(name) as f:
                lines = f.readlines()
        except OSError:
            return None
        for line in lines:
            if line.startswith(_FLAGFILE_PREFIXES):
                found = walk(os.path.expanduser(line.partition("=")[2].strip()), [*chain, (name, real)])
                if found:
                    return found
        return None

    args = list(argv[1:])
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg.startswith(_FLAGFILE_PREFIXES):
            name = arg.partition("=")[2]
        elif arg in ("--flagfile", "-flagfile") and index + 1 < len(args):
            name = args[index + 1]
        else:
            continue
        found = walk(os.path.expanduser(name.strip()), [])
        if found:
            return found
    return None


def parse_flags_or_exit(argv: list[str]) -> list[str]:
    """absl's flag parsing, but a bad flag is one line and exit status 2 (absl's own exits 1).

    A flagfile that includes itself, directly or through others, is such a line too (absl would only warn).
    Help (--help, --helpfull, ...) exits 0 once printed: it is an answer, not a failure (absl exits 1).
    """
    from absl import flags

    cycle = flagfile_cycle(argv)
    if cycle:
        sys.stderr.write(f"error: flagfile {cycle[-1]} includes itself ({' -> '.join(cycle)}): remove the "
                         f"--flagfile={cycle[-1]} line from {cycle[-2]}.\n")
        sys.exit(USAGE)
    try:
        return flags.FLAGS(argv)
    except flags.Error as err:
        sys.stderr.write(f"error: {err}\n(python main.py --helpshort lists the flags and their values)\n")
        sys.exit(USAGE)
    except SystemExit as stop:
        if stop.code == 1 and asked_for_help(argv):
            sys.stdout.flush()
            sys.exit(0)
        raise


class _PlainFormatter(logging.Formatter):
    """INFO as the bare message; warnings and errors prefixed with their level."""

    def format(self, record: logging.LogRecord) -> str:
        message = super().format(record)
        if record.levelno >= logging.ERROR:
            return f"error: {message}"
        if record.levelno >= logging.WARNING:
            return f"warning: {message}"
        return message


# The engine's INFO lines that repeat what TensorFlow 2.15 logged for library users and that a main.py user
# cannot act on: which serving methods an export's signatures implement ("Signatures INCLUDED in export for
# Classify: None", ...; main.py's models export one signature, serving_default).
LIBRARY_ONLY_INFO = (os.sep + os.path.join("estimators", "export", "signatures.py"),)


class _LibraryChatterFilter(logging.Filter):
    """Drops records below ERROR logged from inside TensorFlow or Keras (some of it logs through absl), and the
    engine's INFO lines meant for library users only (LIBRARY_ONLY_INFO; its warnings still show)."""

    def __init__(self, folders: tuple[str, ...]):
        super().__init__()
        self._folders = folders

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING and record.pathname.endswith(LIBRARY_ONLY_INFO):
            return False
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

    return ValueError, TypeError, RuntimeError, OSError, FloatingPointError, tf.errors.OpError


def error_line(err: BaseException) -> str:
    """"error: <message>" for sys.exit, which prints it once to stderr.

    TensorFlow's op errors carry a "Detected at node ... defined at" listing of Python frames after
    their first line: only the lines saying what went wrong are kept (--verbosity=1 shows everything).
    """
    message = getattr(err, "message", None) or str(err) or type(err).__name__
    message = _FUNCTION_NODE.sub("", message)  # "{{function_node __wrapped__SaveV2_...}} ": where inside TensorFlow
    if message.startswith("in user code:"):  # autograph's listing of model_fn frames, then "Type: message"
        last = [line.strip() for line in message.splitlines() if line.strip()][-1]
        message = last.removeprefix(f"{type(err).__name__}: ") + " (--verbosity=1 shows where)"
    elif _is_op_error(err):
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        useful = [line for line in lines if not line.startswith(("Detected at node", "File ", "Graph execution error"))
                  and not line.startswith("[[") and "defined at (most recent call last)" not in line]
        message = " ".join(useful[:2]) or lines[0]
        message += " (--verbosity=1 shows where)"
    return f"error: {message}"


_FUNCTION_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*")


def _is_op_error(err: BaseException) -> bool:
    tf = sys.modules.get("tensorflow")
    return tf is not None and isinstance(err, tf.errors.OpError)
