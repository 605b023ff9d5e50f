"""Test set-up: 8 logical CPU devices stand in for an 8-core TPU (before TensorFlow starts), and the tiers.

`python -m pytest` runs everything; `python -m pytest -m "not slow"` is the fast tier. Which tests are
`slow` is decided here at collection (tests/tiers.py says how), so a new test lands in the right tier
without anyone remembering to mark it; `@pytest.mark.slow` marks anything else by hand. Tests needing an
optional package the environment lacks (tf_keras: the `legacy` extra; tensorboard: `tf.summary.scalar`
and friends) are skipped with a reason naming the package and how to install it.
"""

from __future__ import annotations

import functools
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from tests import tiers  # noqa: E402

NUM_LOGICAL_CPUS = 8

_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * NUM_LOGICAL_CPUS)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: left out of the fast tier (pytest -m 'not slow')")
    config.addinivalue_line("markers", "replicas8: runs on the 8-replica strategy (marks slow)")
    config.addinivalue_line("markers", "subprocess: starts other Python processes (marks slow)")
    config.addinivalue_line("markers", "reference: compares with TensorFlow 2.15's recorded runs (marks slow)")
    config.addinivalue_line("markers", "trains: its module runs a model through an estimator, fit or main.py "
                            "(marks slow)")
    config.addinivalue_line("markers", "smoke: trains, but stays in the fast tier (one tiny end-to-end run)")
    for marker, (package, _) in tiers.OPTIONAL.items():
        config.addinivalue_line("markers", f"{marker}: skipped unless {package} is installed")


_installed = functools.cache(tiers.installed)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.path)
        if not path.endswith(".py"):
            continue
        marks = tiers.marks_for(path, tuple(getattr(item, "fixturenames", ())),
                                smoke=item.get_closest_marker("smoke") is not None)
        for mark in sorted(marks):
            item.add_marker(mark)
        reason = tiers.missing_package(marks | {m.name for m in item.iter_markers()}, _installed)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def eight_replicas() -> tf.distribute.Strategy:
    """MirroredStrategy over the 8 logical CPUs: an 8-core TPU's replication and all-reduce.

    One per session: strategies made side by side in one process reuse collective instance keys.
    """
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(NUM_LOGICAL_CPUS)])
