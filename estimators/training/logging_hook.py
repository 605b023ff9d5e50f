"""LoggingTensorHook, TF2-style: named model_fn tensors logged every N steps, every N seconds, or at the end.

tf.estimator's hook fetched the tensors with session.run; here the train step hands them out: the
step returns replica 0's values of the requested tensors and a host callback (tf.py_function)
delivers them to the hook after every step, inside the compiled loop, so every_n_iter counts
steps as 2.15 did, however many steps a loop runs. Tensors are given by name (op "softmax" or
tensor "softmax:0", relative to model_fn; the way to name them in train(hooks=...)) or, in a
spec's training_hooks, as the Tensor objects model_fn made. The callback costs a host round trip
per step while such a hook is attached.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from estimators import log as logging
from estimators.training.hooks import Hook, SessionProtocol, is_session_call


class LoggingTensorHook(SessionProtocol, Hook):
    """Logs `tensors` ({tag: tensor or name}, or a list) every_n_iter steps or every_n_secs, and/or at_end.

    In a tf.compat.v1 MonitoredSession (begin() without a step) it runs as tf.compat.v1's LoggingTensorHook.
    """

    def __init__(self, tensors: dict | Iterable, every_n_iter: int | None = None, every_n_secs: float | None = None,
                 at_end: bool = False, formatter: Callable[[dict], str] | None = None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("LoggingTensorHook needs at_end=True and/or exactly one of every_n_iter and every_n_secs.")
        if every_n_iter is not None and (isinstance(every_n_iter, bool) or not isinstance(every_n_iter, int)
                                         or every_n_iter <= 0):
            raise ValueError(f"Invalid every_n_iter={every_n_iter!r}: LoggingTensorHook every_n_iter must be a "
                             "positive integer.")
        if every_n_secs is not None and (not isinstance(every_n_secs, int | float) or every_n_secs < 0):
            raise ValueError(f"LoggingTensorHook every_n_secs must be a number >= 0, got {every_n_secs!r}.")
        if isinstance(tensors, dict):
            self._tags = sorted(tensors)
            self.tensors = dict(tensors)
        else:
            items = list(tensors)
            self._tags = [item if isinstance(item, str) else item.name for item in items]
            self.tensors = dict(zip(self._tags, items, strict=True))
        if not self.tensors:
            raise ValueError("LoggingTensorHook needs at least one tensor to log.")
        for tag, tensor in self.tensors.items():
            if not isinstance(tensor, str) and not tf.is_tensor(tensor):
                raise ValueError(f"LoggingTensorHook tensors[{tag!r}] must be a tensor or a tensor name, "
                                 f"got {type(tensor).__name__}.")
        self._every_n_iter, self._every_n_secs = every_n_iter, every_n_secs
        self._only_at_end, self._at_end = only_at_end, at_end
        self._formatter = formatter
        self.begin(0)

    def session_hook(self) -> tf.compat.v1.train.LoggingTensorHook:
        """tf.compat.v1's LoggingTensorHook with these arguments (the graph path runs it)."""
        return tf.compat.v1.train.LoggingTensorHook(self.tensors, every_n_iter=self._every_n_iter,
                                                    every_n_secs=self._every_n_secs, at_end=self._at_end,
                                                    formatter=self._formatter)

    def begin(self, step: int | None = None) -> None:
        if step is None:
            self._begin_session()
        self._iteration = 0
        self._last_iteration: int | None = None
        self._last_time: float | None = None
        self._latest: dict | None = None

    def _due(self) -> bool:
        if self._only_at_end:
            return False
        if self._last_iteration is None:
            return True
        if self._every_n_iter is not None:
            return self._iteration >= self._last_iteration + self._every_n_iter
        return time.monotonic() >= self._last_time + self._every_n_secs

    def step_values(self, values: dict) -> None:
        """One train step's values of every tag (called from inside the running loop)."""
        self._latest = values
        if self._due():
            self._log(values)
        self._iteration += 1

    def _log(self, values: dict) -> None:
        now = time.monotonic()
        elapsed = None if self._last_time is None else now - self._last_time
        self._last_iteration, self._last_time = self._iteration, now
        if self._formatter is not None:
            logging.info("%s", self._formatter(values))
            return
        with np.printoptions(suppress=True):
            text = ", ".join(f"{tag} = {values[tag]}" for tag in self._tags)
        if elapsed is None:
            logging.info("%s", text)
        else:
            logging.info("%s (%.3f sec)", text, elapsed)

    def end(self, step: Any = None) -> None:
        if self._session_original is not None and is_session_call(step):
            self._session_original.end(step)
            return
        if self._at_end and self._latest is not None:
            self._log(self._latest)  # the last step's values (2.15 ran the tensors once more)


def fetch_names(hooks: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """((key, tensor name), ...) that train(hooks=...)'s LoggingTensorHooks ask the step for."""
    wanted = []
    for index, hook in enumerate(h for h in hooks if isinstance(h, LoggingTensorHook)):
        for tag, tensor in hook.tensors.items():
            if not isinstance(tensor, str):
                raise ValueError(
                    f"train(hooks=...): LoggingTensorHook tensors[{tag!r}] is a Tensor, but train()'s hooks exist "
                    "before model_fn makes the step's tensors. Name it (tf.identity(t, name='x'), then {'x': 'x'}), "
                    "or return the hook from model_fn in EstimatorSpec(training_hooks=[...])."
                )
            wanted.append((f"train{index}/{tag}", tensor))
    return tuple(wanted)


def spec_loggers(hooks: Sequence[Any]) -> list[LoggingTensorHook]:
    return [hook for hook in hooks if isinstance(hook, LoggingTensorHook)]


def resolve(tensor: Any, root: str, what: str) -> tf.Tensor:
    """A tensor of the current graph by name (op or tensor name relative to model_fn's call), or as given."""
    graph = tf.compat.v1.get_default_graph()
    if not isinstance(tensor, str):
        if getattr(tensor, "graph", graph) is not graph:
            raise ValueError(f"{what} is a tensor of another graph; log tensors model_fn made in this call.")
        return tensor
    name = root + tensor
    try:
        if ":" in tensor:
            return graph.get_tensor_by_name(name)
        outputs = graph.get_operation_by_name(name).outputs
    except (KeyError, ValueError) as error:
        raise ValueError(f"{what}: model_fn made no tensor named {tensor!r} ({error}). Name it in model_fn "
                         "(e.g. tf.identity(t, name='probabilities')) and log that name.") from None
    if len(outputs) != 1:
        raise ValueError(f"{what}: op {tensor!r} has {len(outputs)} outputs; name one as '{tensor}:0'.")
    return outputs[0]


class StepFetches:
    """Delivers the values a train step fetched to the hooks of the current train() call."""

    def __init__(self) -> None:
        self._receivers: dict[str, LoggingTensorHook] = {}

    def attach(self, train_hooks: Sequence[Any], spec_hooks: Sequence[Any]) -> None:
        self._receivers = {f"train{i}": hook for i, hook in enumerate(spec_loggers(train_hooks))}
        self._receivers.update({f"spec{i}": hook for i, hook in enumerate(spec_loggers(spec_hooks))})

    def deliver(self, keys: Sequence[str], values: Sequence[Any]) -> None:
        by_hook: dict[str, dict] = {}
        for key, value in zip(keys, values, strict=True):
            prefix, tag = key.split("/", 1)
            by_hook.setdefault(prefix, {})[tag] = value.numpy() if hasattr(value, "numpy") else value
        for prefix, tags in by_hook.items():
            hook = self._receivers.get(prefix)
            if hook is not None:
                hook.step_values(tags)

    def graph_callback(self, fetched: dict) -> None:
        """In the compiled loop: hands `fetched` ({key: tensor}) to deliver() on the host after the step."""
        if not fetched:
            return
        keys = sorted(fetched)
        tf.py_function(lambda *values: self.deliver(keys, values) or [], [fetched[k] for k in keys], [])
