"""The engine's guards, registered with scoped_patches in the order they are installed: device iterators without
autotuning, the optimizer guard, Keras 2's get_updates_for, Keras's random draws from the engine's
seeded streams. Imported by whatever calls a model_fn (the executors, preflight), never by the guards themselves."""

from __future__ import annotations

from estimators.compat import (
    device_iterators,
    keras_updates,
    optimizer_guard,
    random_seed,
    scoped_patches,
)

for _install in (device_iterators.install, optimizer_guard.install, keras_updates.install,
                 random_seed.route_keras_random):
    scoped_patches.register(_install)
