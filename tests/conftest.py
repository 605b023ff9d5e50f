"""Test set-up: 8 logical CPU devices stand in for an 8-core TPU (before TensorFlow starts)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

NUM_LOGICAL_CPUS = 8

_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * NUM_LOGICAL_CPUS)


@pytest.fixture(scope="session")
def eight_replicas() -> tf.distribute.Strategy:
    """MirroredStrategy over the 8 logical CPUs: an 8-core TPU's replication and all-reduce.

    One per session: strategies made side by side in one process reuse collective instance keys.
    """
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(NUM_LOGICAL_CPUS)])
