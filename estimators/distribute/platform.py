"""The TensorFlow calls that list devices, start a TPU and build strategies, behind one seam.

Strategy resolution (strategy.py) calls TensorFlow only through a `Platform`, so its logic can be
tested on a machine without a TPU or GPU by passing fakes (`Platform(...)` or `using(...)`), never
by patching TensorFlow itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class Platform:
    """One callable per TensorFlow entry point strategy resolution uses."""

    physical_devices: Callable[[str], list]  # tf.config.list_physical_devices
    logical_devices: Callable[[str], list]  # tf.config.list_logical_devices
    tpu_resolver: Callable[[str], Any]  # TPUClusterResolver(tpu=...)
    connect: Callable[[Any], Any]  # tf.config.experimental_connect_to_cluster
    initialize: Callable[[Any], Any]  # tf.tpu.experimental.initialize_tpu_system
    tpu_strategy: Callable[[Any], tf.distribute.Strategy]  # tf.distribute.TPUStrategy
    mirrored_strategy: Callable[[list[str]], tf.distribute.Strategy]  # tf.distribute.MirroredStrategy
    one_device_strategy: Callable[[str], tf.distribute.Strategy]  # tf.distribute.OneDeviceStrategy
    default_strategy: Callable[[], tf.distribute.Strategy]  # tf.distribute.get_strategy


def tensorflow_platform() -> Platform:
    """The real TensorFlow entry points."""
    return Platform(
        physical_devices=tf.config.list_physical_devices,
        logical_devices=tf.config.list_logical_devices,
        tpu_resolver=lambda tpu: tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu),
        connect=tf.config.experimental_connect_to_cluster,
        initialize=tf.tpu.experimental.initialize_tpu_system,
        tpu_strategy=tf.distribute.TPUStrategy,
        mirrored_strategy=lambda devices: tf.distribute.MirroredStrategy(devices),
        one_device_strategy=tf.distribute.OneDeviceStrategy,
        default_strategy=tf.distribute.get_strategy,
    )


_stack: list[Platform] = []


def current() -> Platform:
    """The platform in use: the innermost `using(...)`, else TensorFlow."""
    return _stack[-1] if _stack else tensorflow_platform()


@contextlib.contextmanager
def using(platform: Platform) -> Iterator[Platform]:
    """Within the block, strategy resolution calls `platform` instead of TensorFlow."""
    _stack.append(platform)
    try:
        yield platform
    finally:
        _stack.remove(platform)
