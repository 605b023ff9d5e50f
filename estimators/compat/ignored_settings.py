"""Settings tf.estimator 2.15 accepted that have no meaning on TF2: each is logged once, never dropped silently.

A setting is reported the first time a config that sets it is made, once per process (a copy made
by `RunConfig.replace`, or a second estimator, does not repeat it). `forget_logged()` starts over,
for a new run in the same process and for tests.
"""

from __future__ import annotations

import threading

from estimators import log as logging

_logged: set[str] = set()
_lock = threading.Lock()


def log_ignored(setting: str, reason: str) -> bool:
    """Logs (absl warning) that `setting` is ignored and why, unless it was logged already; True if logged now."""
    with _lock:
        if setting in _logged:
            return False
        _logged.add(setting)
    logging.warning("%s is ignored: %s", setting, reason)
    return True


def forget_logged() -> None:
    """Every setting is logged again the next time it is seen."""
    with _lock:
        _logged.clear()
