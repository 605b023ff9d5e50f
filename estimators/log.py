"""The engine's log: absl's logger, without absl's side effect on the process.

absl.logging's functions call logging.basicConfig() when the root logger has no handler (any program not
run by absl.app), which adds a root handler for the whole process: every TensorFlow log line is then
printed twice (TensorFlow's own handler and the root's), in the user's code too. These functions log to
the same "absl" logger and leave the process's handlers alone: under absl.app (main.py) lines show as
before; in a library call, warnings and errors reach Python's last-resort handler and INFO lines show
once the program configures logging (tf.compat.v1.logging.set_verbosity does not affect them).
"""

from __future__ import annotations

import logging as _logging
import threading
from typing import Any

from absl import logging as _absl

DEBUG, INFO, WARNING, ERROR = _absl.DEBUG, _absl.INFO, _absl.WARNING, _absl.ERROR
_STANDARD = {DEBUG: _logging.DEBUG, INFO: _logging.INFO, WARNING: _logging.WARNING, ERROR: _logging.ERROR}
_counts: dict[str, int] = {}
_lock = threading.Lock()


def log(level: int, msg: str, *args: Any, **kwargs: Any) -> None:
    """msg % args at an absl level (DEBUG, INFO, WARNING, ERROR)."""
    _absl.get_absl_logger().log(_STANDARD.get(level, level), msg, *args, **kwargs)


def debug(msg: str, *args: Any, **kwargs: Any) -> None:
    log(DEBUG, msg, *args, **kwargs)


def info(msg: str, *args: Any, **kwargs: Any) -> None:
    log(INFO, msg, *args, **kwargs)


def warning(msg: str, *args: Any, **kwargs: Any) -> None:
    log(WARNING, msg, *args, **kwargs)


def error(msg: str, *args: Any, **kwargs: Any) -> None:
    log(ERROR, msg, *args, **kwargs)


def log_first_n(level: int, msg: str, n: int, *args: Any) -> None:
    """Logs the first n times this message (format string) is logged."""
    with _lock:
        count = _counts[msg] = _counts.get(msg, 0) + 1
    if count <= n:
        log(level, msg, *args)


# Records name the engine module that logged (absl's format at --verbosity=1, main.py's filters), not this file.
for _function in (log, debug, info, warning, error, log_first_n):
    _absl.ABSLLogger.register_frame_to_skip(_function.__code__.co_filename, _function.__name__)
