"""Outside engine calls, TensorFlow and Keras are exactly as without this library (issue 16, item 3).

The TF2 path's guards (optimizer and variable-write wrappers, Keras 2's get_updates_for) exist only
while an engine call runs and act only inside its model_fn calls; Python's garbage collector and the
process's random streams are left as the program set them. Each test pins one of these; each failed
on the code that installed the guards once and for all, paused collection for a whole train() and
seeded the process-wide random streams while it ran.
"""

from __future__ import annotations

import gc
import importlib
import random
import sys
import threading
import types

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.distribute import tpu_values
from tensorflow.python.distribute import values as distribute_values
from tensorflow.python.eager import context
from tensorflow.python.ops import gen_resource_variable_ops, resource_variable_ops

from estimators import Hook, RunConfig, TPUConfig, TPUEstimator
from tests import engine_models as m
from tests.test_engine_export import _receiver

_ABSENT = object()
_RAW_WRITES = ("assign_variable_op", "assign_add_variable_op", "assign_sub_variable_op", "resource_scatter_add",
               "resource_scatter_sub", "resource_scatter_mul", "resource_scatter_div", "resource_scatter_min",
               "resource_scatter_max", "resource_scatter_update")
_KERAS_OPTIMIZER = ("apply_gradients", "apply", "add_variable", "add_variable_from_reference")
_TF_KERAS_OPTIMIZER = ("apply_gradients", "add_weight", "add_slot", "__init__", "_build_learning_rate",
                       "add_variable", "add_variable_from_reference")


def _import_if_present(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _keras_base_optimizer() -> type:
    return next(c for c in keras.optimizers.Optimizer.__mro__ if c.__name__ == "BaseOptimizer")


def _variable_classes() -> list[type]:
    found = []
    for module in (resource_variable_ops, distribute_values, tpu_values):
        found += [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, tf.Variable)]
    return found


def _tf_keras_optimizers() -> list[type]:
    legacy = _import_if_present("tf_keras.src.optimizers.legacy.optimizer_v2")
    current = _import_if_present("tf_keras.src.optimizers.optimizer")
    return [c for c in (getattr(legacy, "OptimizerV2", None), getattr(current, "_BaseOptimizer", None)) if c]


_GROUPS = {
    "keras_optimizer": lambda: [(_keras_base_optimizer(), n) for n in _KERAS_OPTIMIZER],
    "v1_optimizer": lambda: [(tf.compat.v1.train.Optimizer, n) for n in ("apply_gradients", "compute_gradients")],
    "tf_keras_optimizers": lambda: [(c, n) for c in _tf_keras_optimizers() for n in _TF_KERAS_OPTIMIZER],
    "variable_writes": lambda: [(c, n) for c in _variable_classes() for n in ("assign", "assign_add", "assign_sub")],
    "raw_write_ops": lambda: [(gen_resource_variable_ops, n) for n in _RAW_WRITES],
}


def _snapshot() -> dict:
    """{group: {(owner, name): the owner's own attribute or _ABSENT}}."""
    return {group: {(owner, name): vars(owner).get(name, _ABSENT) for owner, name in listed()}
            for group, listed in _GROUPS.items()}


def _estimator(model_dir, model_fn=m.linear_model_fn, **config) -> TPUEstimator:
    return TPUEstimator(model_fn, config=RunConfig(model_dir=str(model_dir), **config), use_tpu=False,
                        train_batch_size=8, eval_batch_size=8, predict_batch_size=8)


def _every_engine_call(estimator: TPUEstimator, export_dir) -> None:
    x, y = m.dataset(32)
    estimator.train(m.train_input_fn(x, y), max_steps=2)
    estimator.evaluate(m.eval_input_fn(x, y))
    assert len(list(estimator.predict(m.predict_input_fn(x)))) == 32
    estimator.export_saved_model(str(export_dir), _receiver())


@pytest.fixture(scope="module")
def around_engine_calls(tmp_path_factory):
    """The guarded attributes before and after train, evaluate, predict and export (tf_keras imported first)."""
    _import_if_present("tf_keras.src.engine.base_layer")
    _tf_keras_optimizers()
    before = _snapshot()
    _every_engine_call(_estimator(tmp_path_factory.mktemp("model")), tmp_path_factory.mktemp("export"))
    return before, _snapshot()


@pytest.mark.parametrize("group", sorted(_GROUPS))
def test_tensorflow_and_keras_attributes_are_the_originals_after_engine_calls(around_engine_calls, group):
    before, after = around_engine_calls
    assert before[group], f"nothing to compare in {group}"
    changed = [f"{getattr(owner, '__name__', owner)}.{name}" for (owner, name), value in after[group].items()
               if value is not before[group][(owner, name)]]
    assert changed == []


def test_keras_layers_have_no_get_updates_for_after_an_engine_call(around_engine_calls):
    assert not hasattr(keras.layers.Dense(1), "get_updates_for")
    assert not hasattr(keras.layers.Layer, "get_updates_for")


def test_the_garbage_collectors_settings_are_the_programs_after_engine_calls(tmp_path):
    was_threshold = gc.get_threshold()
    gc.set_threshold(1234, 7, 3)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        _every_engine_call(_estimator(tmp_path / "model"), tmp_path / "export")
        assert (gc.isenabled(), gc.get_threshold()) == (True, (1234, 7, 3))
        assert 0 < gc.get_freeze_count() <= frozen  # still frozen (frozen objects that died have left)
    finally:
        gc.unfreeze()
        gc.set_threshold(*was_threshold)


class _RecordsCollection(Hook):
    def __init__(self) -> None:
        self.enabled: list[bool] = []

    def after_loop(self, info) -> None:
        self.enabled.append(gc.isenabled())


def test_automatic_garbage_collection_stays_on_while_training_hooks_run(tmp_path):
    assert gc.isenabled()
    hook = _RecordsCollection()
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, tpu_config=TPUConfig(iterations_per_loop=1))
    estimator.train(m.train_input_fn(x, y), max_steps=2, hooks=[hook])
    assert hook.enabled == [True, True]


def _blocking_model_fn(inside: threading.Event, go: threading.Event):
    """linear_model_fn that, in its first call, says it is inside and waits for the other thread."""

    def model_fn(features, labels, mode, params):
        if not inside.is_set():
            inside.set()
            assert go.wait(timeout=300), "the other thread never finished"
        return m.linear_model_fn(features, labels, mode, params)

    return model_fn


def _while_model_fn_runs(tmp_path, mode: str, other_thread, **config) -> dict:
    """Runs other_thread(results) on another thread while the engine's first model_fn call (in `mode`) waits."""
    inside, go, results = threading.Event(), threading.Event(), {}

    def other() -> None:
        try:
            assert inside.wait(timeout=300)
            other_thread(results)
        except BaseException as err:  # reported by the test, after the engine call
            results["error"] = err
        finally:
            go.set()

    thread = threading.Thread(target=other)
    thread.start()
    estimator = _estimator(tmp_path, _blocking_model_fn(inside, go), **config)
    x, y = m.dataset(32)
    if mode == "train":
        estimator.train(m.train_input_fn(x, y), max_steps=1)
    else:
        estimator.evaluate(m.eval_input_fn(x, y), steps=1)
    thread.join(timeout=300)
    assert "error" not in results, results.get("error")
    return results


def test_another_threads_keras_layers_have_no_get_updates_for_during_an_engine_call(tmp_path):
    results = _while_model_fn_runs(tmp_path, "evaluate", lambda out: out.update(
        has=hasattr(keras.layers.Dense(1), "get_updates_for")))
    assert results == {"has": False}


def test_another_threads_own_writes_and_optimizer_updates_take_effect_during_an_evaluation(tmp_path):
    def own_code(out: dict) -> None:
        weight = tf.Variable(1.0)
        optimizer = keras.optimizers.SGD(1.0)
        optimizer.build([weight])
        v1 = tf.compat.v1.train.GradientDescentOptimizer(1.0)

        @tf.function
        def step():
            weight.assign(5.0)
            optimizer.apply_gradients([(tf.constant(1.0), weight)])
            v1.apply_gradients([(tf.constant(1.0), weight)])
            weight.assign_sub(0.5)

        step()
        out["weight"] = float(weight.numpy())

    assert _while_model_fn_runs(tmp_path, "evaluate", own_code) == {"weight": 2.5}


def test_another_threads_python_and_numpy_random_streams_are_its_own_during_a_seeded_engine_call(tmp_path):
    random.seed(5)
    np.random.seed(5)
    expected = (random.Random(5).random(), np.random.RandomState(5).rand())
    results = _while_model_fn_runs(tmp_path, "train", lambda out: out.update(
        drawn=(random.random(), np.random.rand())), tf_random_seed=42)
    assert results == {"drawn": expected}


def test_a_seeded_engine_call_leaves_the_global_seed_and_the_random_streams_as_they_were(tmp_path):
    tf.random.set_seed(7)
    random.seed(8)
    np.random.seed(9)
    before = (context.global_seed(), random.getstate(), np.random.get_state()[1].tobytes())
    x, y = m.dataset(32)
    _estimator(tmp_path, tf_random_seed=42).train(m.train_input_fn(x, y), max_steps=1)
    assert (context.global_seed(), random.getstate(), np.random.get_state()[1].tobytes()) == before


def test_every_model_fn_call_runs_guarded_and_nothing_traces_model_fn_after_the_engine_calls(tmp_path):
    """Retraces inside engine calls (a second evaluate on another batch size) are guarded; the exported
    SavedModel, loaded and called afterwards, runs without model_fn and without any guard installed."""
    from estimators.compat import scoped_patches

    seen = []

    def model_fn(features, labels, mode, params):
        seen.append((mode, scoped_patches.active(), hasattr(keras.layers.Dense(1), "get_updates_for")))
        return m.linear_model_fn(features, labels, mode, params)

    estimator = _estimator(tmp_path / "model", model_fn)
    _every_engine_call(estimator, tmp_path / "export")
    x, y = m.dataset(12)
    estimator.evaluate(lambda params: tf.data.Dataset.from_tensor_slices((x, y)).batch(3))  # another signature
    calls = len(seen)
    exported = tf.io.gfile.glob(str(tmp_path / "export" / "*"))[0]
    serve = tf.saved_model.load(exported).signatures["serving_default"]
    assert set(serve(tf.constant(x))) >= {"logits", "classes"}
    assert not scoped_patches.active()
    assert len(seen) == calls
    assert {mode for mode, _, _ in seen} == {"train", "eval", "infer"}
    assert all(active and has for _, active, has in seen)


def test_a_failing_model_fn_leaves_nothing_installed(tmp_path):
    before = _snapshot()

    def model_fn(features, labels, mode, params):
        raise ValueError("model_fn failed")

    x, y = m.dataset(32)
    with pytest.raises(ValueError, match="model_fn failed"):
        _estimator(tmp_path, model_fn).train(m.train_input_fn(x, y), max_steps=1)
    after = _snapshot()
    assert all(after[group][key] is value for group in before for key, value in before[group].items())
    assert not hasattr(keras.layers.Dense(1), "get_updates_for")


_PACKAGES = ("tensorflow", "keras", "tf_keras")
# Issue 28, step 5 (open): what the TF2 path's guards still swap while an engine call runs, seen from another
# thread during train(), by the guard that swaps it (estimators/compat/). Each guard re-keyed on what the engine
# builds takes its names off this list; a name added to it is a new process-wide patch, which the issue rules out.
_STILL_REPLACED_DURING_TRAIN = {
    "device_iterators": ["tensorflow.python.data.ops.multi_device_iterator_ops._create_device_dataset"],
    "optimizer_guard": [f"keras.src.optimizers.base_optimizer.BaseOptimizer.{n}" for n in ("apply", "apply_gradients")]
    + [f"tensorflow.python.training.optimizer.Optimizer.{n}" for n in ("apply_gradients", "compute_gradients")],
    "keras_updates": ["keras.src.layers.layer.Layer.get_updates_for"],
    "random_seed": ["keras.src.random.seed_generator.python_random"],
    # write_guard: none (re-keyed: the variable store guards the variables it creates, each object on its own)
}
_STILL_REPLACED_WITH_TF_KERAS = {  # tf_keras's, when it is installed
    "optimizer_guard": ["tf_keras.src.optimizers.legacy.optimizer_v2.OptimizerV2.apply_gradients",
                        "tf_keras.src.optimizers.optimizer._BaseOptimizer.apply_gradients"],
    "keras_updates": ["tf_keras.src.engine.base_layer.Layer.get_updates_for"],
    "random_seed": ["tf_keras.src.backend.random"],
}


def _code_attributes() -> dict:
    """{(owner id, owner name, attribute): value} for every function, descriptor, class and module that TensorFlow's
    and Keras's modules and classes hold now (data such as counters and caches left out)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in _PACKAGES:
            continue
        owners = [module] + [v for v in list(vars(module).values())
                             if isinstance(v, type) and getattr(v, "__module__", None) == name]
        for owner in owners:
            label = owner.__name__ if isinstance(owner, types.ModuleType) else f"{name}.{owner.__qualname__}"
            for attribute, value in list(vars(owner).items()):
                if callable(value) or hasattr(type(value), "__get__") or isinstance(value, types.ModuleType):
                    found[(id(owner), label, attribute)] = value
    return found


def _submodule_imported(label: str, attribute: str, value) -> bool:
    """A package's attribute that `import` set: its submodule, imported for the first time (tf.data's ops, ...)."""
    return isinstance(value, types.ModuleType) and value.__name__ == f"{label}.{attribute}"


def _replaced(before: dict, now: dict) -> list[str]:
    """Attributes of `before`'s owners that are another object now (code or not), gone, or new on them (other than
    first imports)."""
    owners = {owner for owner, _, _ in before}
    changed = {f"{label}.{attribute}" for (owner, label, attribute), value in now.items()
               if owner in owners and before.get((owner, label, attribute), _ABSENT) is not value
               and not _submodule_imported(label, attribute, value)}
    changed |= {f"{label}.{attribute}" for key in before.keys() - now.keys() for _, label, attribute in [key]}
    return sorted(changed)


@pytest.mark.parametrize("mode", ["train", "evaluate"])
@pytest.mark.parametrize("seed", [None, 42])
def test_another_thread_sees_only_the_known_guards_swapped_during_a_call_and_none_after(tmp_path, mode, seed):
    """random_seed's guard acts only under RunConfig(tf_random_seed=...): an unseeded call leaves Keras's
    `random` reference alone."""
    guards = {name for name in _STILL_REPLACED_DURING_TRAIN if seed is not None or name != "random_seed"}
    known = [name for guard in guards for name in _STILL_REPLACED_DURING_TRAIN[guard]]
    if _import_if_present("tf_keras.src.engine.base_layer") is not None:
        _tf_keras_optimizers()
        known += [name for guard, names in _STILL_REPLACED_WITH_TF_KERAS.items() for name in names
                  if seed is not None or guard != "random_seed"]
    before = _code_attributes()
    results = _while_model_fn_runs(tmp_path, mode, lambda out: out.update(during=_code_attributes()),
                                   tf_random_seed=seed)
    assert _replaced(before, results["during"]) == sorted(known)
    assert _replaced(before, _code_attributes()) == []
