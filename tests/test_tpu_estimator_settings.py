"""TPUEstimator's own settings (2.15's constructor) and the RunConfig settings it applies: tf_random_seed,
num_shards, num_gpus, eval_on_tpu, export_to_tpu/export_to_cpu, batch_axis."""

import logging
import random

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, Estimator, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from estimators.compat.ignored_settings import forget_logged
from estimators.distribute import platform as platform_lib
from estimators.distribute.platform import Platform
from estimators.export import TensorServingInputReceiver
from estimators.run_config import InputPipelineConfig
from tests import engine_models as m


@pytest.fixture(autouse=True)
def _fresh_log():
    forget_logged()
    yield
    forget_logged()


class _Resolver:
    count = 0

    def __init__(self, tpu):
        _Resolver.count += 1
        self._master = f"grpc://settings-tpu-{_Resolver.count}:8470"

    def master(self):
        return self._master


def _platform(tpu_strategy=None, gpus=0, calls=None) -> Platform:
    """Fake devices: a 'TPU' that is `tpu_strategy`, `gpus` GPUs whose strategies are the CPU's; records calls."""
    calls = calls if calls is not None else []

    def record(name, value, result):
        calls.append((name, value))
        return result

    gpu_devices = [tf.config.LogicalDevice(f"/device:GPU:{i}", "GPU") for i in range(gpus)]
    return Platform(
        physical_devices=lambda kind: [tf.config.PhysicalDevice("/physical_device:TPU:0", "TPU")]
        if kind == "TPU" and tpu_strategy else [],
        logical_devices=lambda kind: gpu_devices if kind == "GPU" else [],
        tpu_resolver=_Resolver, connect=lambda r: None, initialize=lambda r: None,
        tpu_strategy=lambda r: tpu_strategy,
        mirrored_strategy=lambda names: record("mirrored", list(names), tf.distribute.get_strategy()),
        one_device_strategy=lambda name: record("one", name, tf.distribute.OneDeviceStrategy("/cpu:0")),
        default_strategy=tf.distribute.get_strategy,
    )


def _receiver():
    x = tf.compat.v1.placeholder(tf.float32, [None, m.FEATURES])
    return TensorServingInputReceiver(x, {"x": x})


# -- tf_random_seed ---------------------------------------------------------------------------------------


def unseeded_model_fn(features, labels, mode, params):
    """Unseeded Keras initializers (seeded from Python's random) and a tf.compat.v1 one (TensorFlow's global
    seed), trained with a zero learning rate."""
    hidden = keras.layers.Dense(5)(features)
    logits = keras.layers.Dense(m.CLASSES, kernel_initializer=tf.compat.v1.random_normal_initializer())(hidden)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    train_op = CrossShardOptimizer(keras.optimizers.SGD(0.0)).minimize(loss)
    return TPUEstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op)


def _initial_variables(model_dir, seed):
    x, y = m.dataset(16)
    estimator = TPUEstimator(unseeded_model_fn, config=RunConfig(model_dir=str(model_dir), tf_random_seed=seed),
                             use_tpu=False, train_batch_size=16)
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    names = [n for n in estimator.get_variable_names() if n != "global_step"]
    return {name: estimator.get_variable_value(name) for name in names}


def test_two_estimators_with_the_same_seed_start_identical_and_another_seed_differs(tmp_path):
    first = _initial_variables(tmp_path / "a", 42)
    keras.layers.Dense(3).build((None, 2))  # draws from the generators between the two runs
    tf.random.uniform([2])
    second = _initial_variables(tmp_path / "b", 42)
    other = _initial_variables(tmp_path / "c", 43)
    assert sorted(first) == sorted(second) == sorted(other)
    assert {"dense/kernel", "dense_1/kernel"} <= set(first)
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)
    assert not np.array_equal(first["dense_1/kernel"], other["dense_1/kernel"])
    assert not np.array_equal(first["dense/kernel"], other["dense/kernel"])


def test_seeding_leaves_the_users_python_and_numpy_random_streams_alone(tmp_path):
    random.seed(5)
    np.random.seed(5)
    expected = (random.random(), np.random.rand())
    random.seed(5)
    np.random.seed(5)
    _initial_variables(tmp_path, 42)
    assert (random.random(), np.random.rand()) == expected


def test_seeding_leaves_tensorflows_global_seed_and_op_seed_stream_alone(tmp_path):
    tf.random.set_seed(5)
    expected = [tf.random.uniform([2]).numpy() for _ in range(2)]
    tf.random.set_seed(5)
    first = tf.random.uniform([2]).numpy()
    _initial_variables(tmp_path / "seeded", 42)
    np.testing.assert_array_equal([first, tf.random.uniform([2]).numpy()], expected)


def test_an_unseeded_caller_stays_unseeded_after_a_seeded_run(tmp_path):
    from tensorflow.python.eager import context

    context.context()._set_global_seed(None)  # noqa: SLF001 - the state tf.random.set_seed(None) cannot restore
    _initial_variables(tmp_path, 42)
    assert tf.compat.v1.get_seed(None) == (None, None)


# -- num_shards ---------------------------------------------------------------------------------------------


def test_num_shards_that_disagrees_with_the_tpu_is_one_clear_error(tmp_path):
    x, y = m.dataset(16)
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(num_shards=8))
    with platform_lib.using(_platform(tpu_strategy=tf.distribute.OneDeviceStrategy("/cpu:0"))):
        estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=True, train_batch_size=8)
        with pytest.raises(ValueError, match=r"num_shards=8\) does not match the 1 replicas"):
            estimator.train(m.train_input_fn(x, y), max_steps=1)


def test_num_shards_off_the_tpu_is_logged_once_as_ignored(tmp_path, caplog):
    x, y = m.dataset(16)
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(num_shards=8))
    with caplog.at_level(logging.WARNING, logger="absl"):
        estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=8,
                                 eval_batch_size=8)
        estimator.train(m.train_input_fn(x, y), max_steps=1)
        estimator.evaluate(m.eval_input_fn(x, y))
    assert caplog.text.count("TPUConfig(num_shards=...) is ignored") == 1


def test_num_shards_matching_the_replicas_is_accepted(tmp_path, eight_replicas):
    x, y = m.dataset(16)
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(num_shards=8))
    with platform_lib.using(_platform(tpu_strategy=eight_replicas)):
        TPUEstimator(m.linear_model_fn, config=config, use_tpu=True, train_batch_size=16).train(
            m.train_input_fn(x, y), max_steps=1)


# -- num_gpus --------------------------------------------------------------------------------------------


def test_num_gpus_picks_the_local_devices(tmp_path):
    calls, (x, y) = [], m.dataset(16)
    with platform_lib.using(_platform(gpus=4, calls=calls)):
        estimator = TPUEstimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path), num_gpus=1),
                                 use_tpu=False, train_batch_size=8)
        estimator.train(m.train_input_fn(x, y), max_steps=1)
    assert calls == [("one", "/device:GPU:0")]


def test_num_gpus_picks_the_local_devices_of_a_plain_estimator_too(tmp_path):
    calls, (x, y) = [], m.dataset(16)
    with platform_lib.using(_platform(gpus=4, calls=calls)):
        estimator = Estimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path), num_gpus=2))
        estimator.train(lambda: m.train_input_fn(x, y)({"batch_size": 8}), max_steps=1)
    assert calls == [("mirrored", ["/device:GPU:0", "/device:GPU:1"])]


def test_num_gpus_picks_the_devices_of_evaluation_off_the_tpu(tmp_path):
    calls, (x, y) = [], m.dataset(16)
    with platform_lib.using(_platform(tpu_strategy=tf.distribute.get_strategy(), gpus=4, calls=calls)):
        estimator = TPUEstimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path), num_gpus=2),
                                 use_tpu=True, eval_on_tpu=False, train_batch_size=8, eval_batch_size=8)
        estimator.train(m.train_input_fn(x, y), max_steps=1)
        assert calls == []
        estimator.evaluate(m.eval_input_fn(x, y))
    assert calls == [("mirrored", ["/device:GPU:0", "/device:GPU:1"])]


# -- constructor checks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"params": {"context": 1}}, r"params\['context'\] is reserved"),
    ({"use_tpu": True}, r"use_tpu=True\) needs train_batch_size"),
    ({"export_saved_model_api_version": 3}, "export_saved_model_api_version must be 1 or 2"),
    ({"batch_axis": (1, 0)}, "batch_axis=\\(1, 0\\) is not supported"),
])
def test_tpu_estimator_rejects_what_2_15_rejected_or_cannot_do(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        TPUEstimator(m.linear_model_fn, model_dir=str(tmp_path), **{"use_tpu": False, **kwargs})


def test_batch_axis_with_per_replica_input_is_logged_as_ignored_as_2_15_ignored_it(tmp_path, caplog):
    config = RunConfig(model_dir=str(tmp_path),
                       tpu_config=TPUConfig(per_host_input_for_training=InputPipelineConfig.PER_HOST_V2))
    with caplog.at_level(logging.WARNING, logger="absl"):
        TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, batch_axis=(1, 0))
    assert "TPUEstimator(batch_axis=...) is ignored" in caplog.text


# -- export targets ----------------------------------------------------------------------------------------


@pytest.fixture
def trained(tmp_path):
    estimator = TPUEstimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path / "model")), use_tpu=False,
                             train_batch_size=16)
    return estimator.train(m.train_input_fn(*m.dataset(16)), max_steps=1)


def _with_export_targets(estimator, export_to_tpu, export_to_cpu):
    return TPUEstimator(m.linear_model_fn, model_dir=estimator.model_dir, use_tpu=False,
                        export_to_tpu=export_to_tpu, export_to_cpu=export_to_cpu)


def test_export_to_tpu_is_logged_once_as_not_written(trained, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="absl"):
        trained.export_saved_model(str(tmp_path / "export"), _receiver)
        trained.export_saved_model(str(tmp_path / "export"), _receiver)
    assert caplog.text.count("TPUEstimator(export_to_tpu=True) is ignored: only the CPU serving graph") == 1


def test_export_to_cpu_false_is_refused_rather_than_writing_a_cpu_graph(trained, tmp_path):
    estimator = _with_export_targets(trained, export_to_tpu=True, export_to_cpu=False)
    with pytest.raises(ValueError, match="export_to_cpu=False asks for a TPU-only SavedModel"):
        estimator.export_saved_model(str(tmp_path / "export"), _receiver)
    assert not (tmp_path / "export").exists()
