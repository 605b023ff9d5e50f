"""SIGTERM and Ctrl-C during train(): stop at the next step boundary, save, and say how to resume.

A Colab disconnect, a TPU VM maintenance event or a spot-VM preemption reaches the process as
SIGTERM; a user's Ctrl-C as SIGINT. The first one sets a flag the compiled loop reads before
every step (a watcher thread sets it while TensorFlow runs, through Python's wakeup fd), so the
loop ends at a step boundary and train() saves and raises TrainingInterrupted. A second signal
gets the default action: the process ends at once (a checkpoint being written is never
published half-done). tf.distribute's PreemptionCheckpointHandler is not used: it saves and
restores object-based tf.train.Checkpoints itself, and it and PreemptionWatcher do not run on
Cloud TPU VMs or GCP CPU hosts; across workers, train() all-reduces the flag at every loop
boundary instead, so all workers stop at the same step.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

import tensorflow as tf
from tensorflow.python.eager import context

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingInterrupted(KeyboardInterrupt):
    """train() stopped early on SIGINT/SIGTERM, after saving a checkpoint at `step`."""

    def __init__(self, signal_name: str, step: int, checkpoint: str | None):
        self.signal_name, self.step, self.checkpoint = signal_name, step, checkpoint
        where = f"; checkpoint {checkpoint}" if checkpoint else ""
        super().__init__(
            f"Training stopped by {signal_name} at global step {step}{where}. Run the same training again "
            "(same model_dir) to resume from there."
        )


class StopRequest:
    """A host-side boolean variable the training loop reads before each step, plus who set it."""

    def __init__(self) -> None:
        self._variable: tf.Variable | None = None
        self.signal_name: str | None = None

    @property
    def variable(self) -> tf.Variable:
        """Made on first use (by the TF2 loop), so a graph-path program never creates an eager variable."""
        if self._variable is None:
            with tf.init_scope():
                self._variable = tf.Variable(self.requested, trainable=False, name="estimators_stop_requested")
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

    Outside the main thread (signals cannot be caught there) the block changes nothing.
    """
    stop.clear()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous_handlers = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)

    def handler(signum: int, frame: Any) -> None:  # runs in the main thread, between bytecodes
        del frame
        for sig in _SIGNALS:
            signal.signal(sig, signal.SIG_DFL)  # the second signal ends the process at once
        if not stop.requested:
            stop.request(signal.Signals(signum).name)

    def watch() -> None:  # wakes while the main thread waits in TensorFlow
        try:
            data = os.read(read_fd, 1)
        except OSError:
            return
        if data and data != b"\0" and not stop.requested:
            stop.request(signal.Signals(data[0]).name)

    for sig in _SIGNALS:
        signal.signal(sig, handler)
    watcher = threading.Thread(target=watch, name="estimators-signal-watcher", daemon=True)
    watcher.start()
    try:
        yield stop
    finally:
        signal.set_wakeup_fd(previous_fd)
        for sig, previous in previous_handlers.items():
            signal.signal(sig, previous)
        os.write(write_fd, b"\0")  # lets the watcher return
        watcher.join(timeout=5)
        os.close(read_fd)
        os.close(write_fd)
