"""model_dir through storage that fails now and then (gs://, a mounted Drive): retry reads and repeatable writes,
then one clear error.

A failed read or listing is never taken as "no checkpoint": TensorFlow's own helpers turn errors into
"absent" (get_checkpoint_state returns None, tf.io.gfile.isdir and listdir's directory check return False),
and a trainer that believed them started from step 0 over an existing run. Here only NotFoundError means
absent; other storage errors are retried with backoff and then raised as ModelDirUnreadableError.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import tensorflow as tf

from estimators import log as logging

T = TypeVar("T")

ATTEMPTS = 4  # tries of one read in all (TensorFlow's GCS client retries each request below this too)
FIRST_DELAY_S = 0.5  # then doubling: 0.5, 1, 2 s between the tries

# Errors that say something definite about the path rather than the storage service: retrying cannot help.
_DEFINITE = (tf.errors.NotFoundError, tf.errors.PermissionDeniedError, tf.errors.UnauthenticatedError,
             tf.errors.InvalidArgumentError, tf.errors.UnimplementedError, tf.errors.FailedPreconditionError,
             tf.errors.DataLossError, tf.errors.OutOfRangeError)  # DataLoss: damaged files, not the service


class ModelDirUnreadableError(RuntimeError):
    """model_dir could not be read (state file, listing, a checkpoint's files): nothing was started or changed."""


def is_fault(err: BaseException) -> bool:
    """Whether `err` is the storage failing (503, reset, timeout, I/O error), as opposed to a definite answer."""
    if isinstance(err, _DEFINITE):
        return False
    return isinstance(err, (tf.errors.OpError, OSError))


def read(model_dir: str, what: str, operation: Callable[[], T]) -> T:
    """operation() retried with backoff while the storage fails; NotFoundError passes through unchanged.

    `what` names the read for the message ("the `checkpoint` state file gs://b/run/checkpoint"). Raises
    ModelDirUnreadableError naming model_dir, the read and the last fault when every try fails, or at once
    for a definite refusal (permission denied, bad credentials).
    """
    try:
        return _retried(model_dir, what, "Reading", operation)
    except _GaveUp as gave_up:
        err = gave_up.error
        if isinstance(err, tf.errors.NotFoundError):
            raise err from None
        tries = f" after {gave_up.attempts} tries" if gave_up.attempts > 1 else ""
        raise ModelDirUnreadableError(
            f"Could not read model_dir {model_dir} ({what}){tries}: {type(err).__name__}: {_first_line(err)}. "
            "Nothing was restored, overwritten or deleted: a checkpoint that cannot be read is not taken as "
            "no checkpoint. Check that the storage is reachable and readable (credentials, network, bucket), "
            "then run again.") from None


def write(model_dir: str, what: str, operation: Callable[[], T]) -> T:
    """operation() (a write that can be repeated: it replaces what it writes) retried with the same backoff as
    reads while the storage fails: TensorFlow's GCS client retries a write far less than a read, and a short
    burst of 503s on the `checkpoint` state file stopped training. The last error is raised as it is."""
    try:
        return _retried(model_dir, what, "Writing", operation)
    except _GaveUp as gave_up:
        raise gave_up.error from None


class _GaveUp(Exception):
    def __init__(self, error: BaseException, attempts: int):
        super().__init__(str(error))
        self.error, self.attempts = error, attempts


def _retried(model_dir: str, what: str, verb: str, operation: Callable[[], T]) -> T:
    """operation(), tried up to ATTEMPTS times while is_fault; _GaveUp holds the error that ended the tries."""
    delay = FIRST_DELAY_S
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return operation()
        except (tf.errors.OpError, OSError) as err:
            if not is_fault(err) or attempt == ATTEMPTS:
                raise _GaveUp(err, attempt) from err
            logging.warning("%s %s in model_dir %s failed (%s); trying again in %.1f s (try %d of %d).",
                            verb, what, model_dir, _first_line(err), delay, attempt + 1, ATTEMPTS)
            time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")


def _first_line(err: BaseException) -> str:
    text = (getattr(err, "message", None) or str(err) or type(err).__name__).strip()
    return text.splitlines()[0] if text else type(err).__name__
