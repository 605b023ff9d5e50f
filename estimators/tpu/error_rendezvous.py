"""ErrorRendezvous: collects the errors of several threads of one run and re-raises the most telling one.

2.15's TPUEstimator ran its infeed and outfeed in threads beside the main loop. When one of them
failed, the others usually failed too, with "session cancelled" or the like, and whichever error
reached the user first hid the real cause (a bad file name, say). Each thread therefore reported
its error (or that it finished) here; once they were done, `raise_errors` re-raised an error that
is not a mere cancellation if there was one. Aborted and Unavailable errors are left to the
session's own recovery and not recorded. A source given a session closes it a few seconds after
its error, so that the other threads do not wait forever on it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

_log = logging.getLogger("tensorflow")

_UNINTERESTING_ERRORS = (tf.errors.CancelledError,)
_IGNORED_ERRORS = (tf.errors.AbortedError, tf.errors.UnavailableError)
_CHECK_NUMERICS_OP = "CheckNumerics"
_SESSION_CLOSE_DELAY_SECS = 5


class ErrorRendezvous:
    """Where `num_sources` threads report their errors (or completion); `raise_errors` picks one to raise."""

    def __init__(self, num_sources: int):
        self._errors: dict[str, Any] = {}  # source -> sys.exc_info() triple, or None when it finished cleanly
        self._num_sources = num_sources
        self._session_cancel_timer: threading.Thread | None = None

    def record_error(self, source: str, exc_info: tuple, session: Any = None) -> None:
        """Records `source`'s error (a sys.exc_info() triple); with a session, closes it a few seconds later."""
        value = exc_info[1]
        if isinstance(value, _IGNORED_ERRORS):
            return
        self._errors[source] = exc_info
        op = getattr(value, "op", None)
        if getattr(op, "type", None) == _CHECK_NUMERICS_OP:
            return  # a NaN/Inf check: the loop itself completed, the other threads finish normally
        if session is not None and self._session_cancel_timer is None:
            self._session_cancel_timer = threading.Thread(target=_close_later, args=(session, value), daemon=True)
            self._session_cancel_timer.start()

    def record_done(self, source: str) -> None:
        """Marks `source` as finished (an error it reported stays)."""
        _log.info("%s marked as finished", source)
        self._errors.setdefault(source, None)

    @contextlib.contextmanager
    def catch_errors(self, source: str, session: Any = None) -> Iterator[None]:
        """Records (and swallows) any error raised in the block as `source`'s."""
        try:
            yield
        except Exception:  # noqa: BLE001 - every error is recorded, to be re-raised by raise_errors
            self.record_error(source, sys.exc_info(), session)

    def raise_errors(self, timeout_sec: int = 0) -> None:
        """Waits up to `timeout_sec` for every source, then re-raises a recorded error: a telling one first."""
        for _ in range(timeout_sec):
            if len(self._errors) == self._num_sources:
                break
            time.sleep(1)
        kept = [info for info in self._errors.values() if info is not None]
        kept.sort(key=lambda info: isinstance(info[1], _UNINTERESTING_ERRORS))  # stable: telling ones first
        if kept:
            _log.warning("Reraising captured error")
            raise kept[0][1].with_traceback(kept[0][2])


def _close_later(session: Any, error: BaseException) -> None:
    time.sleep(_SESSION_CLOSE_DELAY_SECS)
    _log.error("Closing session due to error %s", error)
    try:
        session.close()
    except Exception:  # noqa: BLE001
        _log.error("Failed to close the session after the error; other threads may hang.")
