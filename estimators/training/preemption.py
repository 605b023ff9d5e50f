"""SIGTERM and Ctrl-C during train(): stop at the next step boundary, save, and say how to resume.

A Colab disconnect, a TPU VM maintenance event or a spot-VM preemption reaches the process as
SIGTERM; a user's Ctrl-C as SIGINT. The first one sets a flag the compiled loop reads before
every step (a watcher thread sets it while TensorFlow runs, through Python's wakeup fd), so the
loop ends at a step boundary and train() saves and raises TrainingInterrupted. evaluate() reads
the same flag before every batch and raises EvaluationInterrupted (a TrainingInterrupted: the
checkpoint it evaluates is saved already), also when train_and_evaluate evaluates inside train().
A second signal gets the default action: the process ends at once (a checkpoint being written is
never published half-done), even while the main thread waits in a long TensorFlow call: the
watcher restores the default action itself (Python lets only the main thread call
signal.signal, and runs handlers only between bytecodes, so a second Ctrl-C used to wait for the
step to end). The first signal logs one warning saying so (a second signal gives no chance to say
anything: it is the kernel's default action): what is kept then is what was already published, the
newest complete checkpoint and the state file naming it, never a half-written one. Blocks nest
(evaluate() inside train()): the outermost one owns the handlers, and a signal stops every block's
request. tf.distribute's PreemptionCheckpointHandler is not used: it saves and
restores object-based tf.train.Checkpoints itself, and it and PreemptionWatcher do not run on
Cloud TPU VMs or GCP CPU hosts; across workers, train() all-reduces the flag at every loop
boundary instead, so all workers stop at the same step.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.ops import resource_variable_ops

from estimators import log as logging

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_active: list[StopRequest] = []  # the requests of the stopping_on_signals blocks open now, outermost first


class TrainingInterrupted(KeyboardInterrupt):
    """train() stopped early on SIGINT/SIGTERM, after saving a checkpoint at `step`."""

    def __init__(self, signal_name: str, step: int, checkpoint: str | None):
        self.signal_name, self.step, self.checkpoint = signal_name, step, checkpoint
        where = f"; checkpoint {checkpoint}" if checkpoint else ""
        super().__init__(
            f"Training stopped by {signal_name} at global step {step}{where}. Run the same training again "
            "(same model_dir) to resume from there."
        )


class EvaluationInterrupted(TrainingInterrupted):
    """evaluate() stopped by SIGINT/SIGTERM after `batches` batches of the checkpoint at `checkpoint` (global
    `step`); nothing was written. A TrainingInterrupted, so that programs (main.py) that handle a signal
    during training handle one during evaluation alike."""

    def __init__(self, signal_name: str, step: int, checkpoint: str | None, batches: int):
        KeyboardInterrupt.__init__(
            self, f"Evaluation stopped by {signal_name} after {batches} batches (global step {step}"
            + (f"; checkpoint {checkpoint}" if checkpoint else "") + "); no results were written. Run the "
            "evaluation again to evaluate that checkpoint.")
        self.signal_name, self.step, self.checkpoint, self.batches = signal_name, step, checkpoint, batches


class StopRequest:
    """A host-side boolean variable the training loop reads before each step, plus who set it."""

    def __init__(self) -> None:
        self._variable: tf.Variable | None = None
        self.signal_name: str | None = None

    @property
    def variable(self) -> tf.Variable:
        """Made on first use (by the TF2 loop), so a graph-path program never creates an eager variable."""
        if self._variable is None:
            # A plain host variable, whatever strategy's scope is open (ResourceVariable bypasses the strategy's
            # variable creator): train's and evaluate's loops read it, under their own strategies.
            with tf.init_scope(), tf.device("/cpu:0"):
                self._variable = resource_variable_ops.ResourceVariable(
                    self.requested, trainable=False, name="estimators_stop_requested")
        return self._variable

    @property
    def requested(self) -> bool:
        return self.signal_name is not None

    def request(self, signal_name: str) -> None:
        self.signal_name = signal_name
        if self._variable is not None:
            with context.eager_mode():  # an eager variable, whatever graph is the default one
                self._variable.assign(True)

    def clear(self) -> None:
        self.signal_name = None
        if self._variable is not None:
            with context.eager_mode():
                self._variable.assign(False)


@contextlib.contextmanager
def stopping_on_signals(stop: StopRequest) -> Iterator[StopRequest]:
    """Within the block, the first SIGINT/SIGTERM requests a stop; a second one ends the process.

    An outermost block clears `stop` and installs the handlers; a block inside another one (evaluate()
    inside train()) keeps a request already made and shares the outer block's handlers. Outside the main
    thread (signals cannot be caught there) the block changes nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        stop.clear()
        yield stop
        return
    if _active:
        yield from _nested(stop)
        return
    stop.clear()
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous_handlers = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)

    noted = threading.Lock()  # the note is logged once, by whichever of handler and watcher comes first

    def note(signum: int) -> None:  # before the default action is in place: a second signal cannot cut it off
        if noted.acquire(blocking=False):
            logging.warning("%s", stopping_note(signal.Signals(signum).name))

    def handler(signum: int, frame: Any) -> None:  # runs in the main thread, between bytecodes
        del frame
        note(signum)
        for sig in _SIGNALS:
            signal.signal(sig, signal.SIG_DFL)  # the second signal ends the process at once
        _request_all(signal.Signals(signum).name)

    def watch() -> None:  # reads a byte per signal delivered, whatever the main thread is doing
        received = 0
        while True:
            try:
                data = os.read(read_fd, 1)
            except OSError:
                return
            if not data or data == b"\0":
                return
            received += 1
            if received > 1:  # a second one arrived before the default action was in place
                _end_by(data[0])
            note(data[0])
            _default_actions()  # from here a second signal ends the process, main thread busy or not
            _request_all(signal.Signals(data[0]).name)

    for sig in _SIGNALS:
        signal.signal(sig, handler)
    watcher = threading.Thread(target=watch, name="estimators-signal-watcher", daemon=True)
    watcher.start()
    _active.append(stop)
    try:
        yield stop
    finally:
        _active.clear()
        signal.set_wakeup_fd(previous_fd)
        for sig, previous in previous_handlers.items():
            signal.signal(sig, previous)
        os.write(write_fd, b"\0")  # lets the watcher return
        watcher.join(timeout=5)
        os.close(read_fd)
        os.close(write_fd)


def stopping_note(signal_name: str) -> str:
    """The line the first signal logs: what happens now, and what a second signal would do instead."""
    first, again = ("Ctrl-C", "press Ctrl-C again") if signal_name == "SIGINT" else (
        signal_name, f"send {signal_name} again or press Ctrl-C")
    return (f"{first}: stopping after the current step and saving a checkpoint (an evaluation stops at the next "
            f"batch, writing nothing); {again} to quit at once, keeping only the checkpoints already saved.")


def _nested(stop: StopRequest) -> Iterator[StopRequest]:
    """A block inside an open one: `stop` joins the requests a signal sets (already set if one came)."""
    if stop not in _active:
        stop.clear()
        signal_name = next((s.signal_name for s in _active if s.requested), None)
        if signal_name is not None:
            stop.request(signal_name)
    _active.append(stop)
    try:
        yield stop
    finally:
        _active.remove(stop)


def _request_all(signal_name: str) -> None:
    for stop in list(_active):
        if not stop.requested:
            stop.request(signal_name)


def _default_actions() -> None:
    """SIG_DFL for SIGINT and SIGTERM from any thread (libc's signal(); Python's signal.signal is main-thread
    only). Python's own table keeps its handler until the main thread runs it, which sets SIG_DFL too."""
    try:
        libc = ctypes.CDLL(None)
        libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
        libc.signal.restype = ctypes.c_void_p
        for sig in _SIGNALS:
            libc.signal(int(sig), None)  # None: a null pointer, SIG_DFL
    except (OSError, AttributeError):  # no libc to call: the handler or _end_by ends the process instead
        pass


def _end_by(signum: int) -> None:
    """Ends the process as signal `signum`'s default action does (a second signal while stopping)."""
    _default_actions()
    os.kill(os.getpid(), signum)
