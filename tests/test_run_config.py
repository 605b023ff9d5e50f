"""RunConfig and TPUConfig take every setting 2.15 took: applied, validated, or logged once as ignored."""

import dataclasses
import json
import logging
import math

import pytest
import tensorflow as tf

import estimators
from estimators import RunConfig, TPUConfig
from estimators.compat.ignored_settings import forget_logged
from estimators.run_config import InputPipelineConfig, IterationsPerLoop, parse_iterations_per_loop

_CLUSTER = {"chief": ["host0:2222"], "ps": ["host1:2222", "host2:2222"],
            "worker": ["host3:2222", "host4:2222", "host5:2222"]}


@pytest.fixture(autouse=True)
def _fresh_log():
    forget_logged()
    yield
    forget_logged()


# -- TPUConfig ---------------------------------------------------------------------------------------


def test_input_pipeline_config_has_2_15s_values():
    values = [InputPipelineConfig.PER_SHARD_V1, InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.PER_HOST_V2,
              InputPipelineConfig.BROADCAST, InputPipelineConfig.SLICED]
    assert values == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("given", "stored"), [(True, 2), (False, 1), (3, 3)])
def test_per_host_input_for_training_is_normalised_as_2_15_did(given, stored):
    assert TPUConfig(per_host_input_for_training=given).per_host_input_for_training == stored


def test_broadcast_input_is_refused_with_the_alternatives():
    with pytest.raises(ValueError, match=r"BROADCAST .* not supported\. Use PER_HOST_V1 \(True, the default\)"):
        TPUConfig(per_host_input_for_training=InputPipelineConfig.BROADCAST)


@pytest.mark.parametrize(("value", "parsed"), [(100, (100, "count")), ("100", (100, "count")),
                                               ("30s", (30, "seconds")), ("10m", (600, "seconds")),
                                               ("1h", (3600, "seconds"))])
def test_iterations_per_loop_is_a_step_count_or_a_time(value, parsed):
    assert TPUConfig(iterations_per_loop=value).iterations_per_loop_counter == IterationsPerLoop(*parsed)


def test_a_step_count_given_as_text_is_stored_as_an_int():
    assert TPUConfig(iterations_per_loop="100").iterations_per_loop == 100


@pytest.mark.parametrize("value", [0, -3, "0s", "1.5", "30x", "s", True, 2.0, None])
def test_bad_iterations_per_loop_is_one_clear_error(value):
    with pytest.raises(ValueError, match=r"iterations_per_loop must be a positive integer .* or a time"):
        parse_iterations_per_loop(value)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_shards": 0}, "num_shards must be a positive integer"),
    ({"num_cores_per_replica": 3}, "num_cores_per_replica must be 1, 2, 4"),
    ({"input_partition_dims": [[1, 2, 2, 1], None]}, "input_partition_dims is only supported in PER_HOST_V2"),
    ({"input_partition_dims": [[1, 2, 2, 1]], "per_host_input_for_training": InputPipelineConfig.PER_HOST_V2},
     "requires setting num_cores_per_replica"),
    ({"eval_training_input_configuration": InputPipelineConfig.PER_HOST_V2}, "PER_HOST_V1 or SLICED"),
    ({"initial_infeed_sleep_secs": -1}, "initial_infeed_sleep_secs must be a positive integer"),
])
def test_tpu_config_rejects_what_2_15_rejected_or_cannot_run(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TPUConfig(**kwargs)


def test_tpu_job_name_comes_from_tf_config_as_in_2_15(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"service": {"tpu_worker_job_name": "tpu_job"}}))
    assert TPUConfig().tpu_job_name == "tpu_job"


# -- checkpoint intervals and replace ----------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "steps", "secs"), [
    ({}, None, 600),
    ({"save_checkpoints_steps": 10}, 10, None),
    ({"save_checkpoints_secs": 30}, None, 30),
    ({"save_checkpoints_steps": None}, None, None),
    ({"save_checkpoints_steps": None, "save_checkpoints_secs": None}, None, None),
    ({"save_checkpoints_steps": 0}, None, None),
])
def test_checkpoint_intervals_resolve_as_in_2_15(kwargs, steps, secs):
    config = RunConfig(**kwargs)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (steps, secs)
    assert config.saves_checkpoints == (steps is not None or secs is not None)
    assert config.checkpoint_every_secs == (None if steps else secs or math.inf)


def test_replacing_one_checkpoint_interval_clears_the_other():
    config = RunConfig(save_checkpoints_secs=60)
    replaced = config.replace(save_checkpoints_steps=10)
    assert (replaced.save_checkpoints_steps, replaced.save_checkpoints_secs) == (10, None)
    back = replaced.replace(save_checkpoints_secs=30)
    assert (back.save_checkpoints_steps, back.save_checkpoints_secs) == (None, 30)


def test_replace_refuses_what_2_15_refused_and_names_what_it_takes():
    with pytest.raises(ValueError, match=r"Replacing master is not supported\. Allowed: model_dir, tf_random_seed"):
        RunConfig().replace(master="grpc://elsewhere:8470")
    assert RunConfig().replace(tpu_config=TPUConfig(5)).tpu_config.iterations_per_loop == 5


def test_keep_checkpoint_max_none_stays_none_and_keeps_everything_like_zero():
    from estimators.checkpoint.checkpointer import Checkpointer

    assert RunConfig(keep_checkpoint_max=None).keep_checkpoint_max is None  # as 2.15 kept it
    assert Checkpointer("/tmp/unused", None).max_to_keep is None  # None and 0: keep every checkpoint


# -- validation ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"model_dir": ""}, "model_dir must be a non-empty path"),
    ({"tf_random_seed": 1.5}, "tf_random_seed must be integer"),
    ({"save_summary_steps": -1}, "save_summary_steps must be an integer >= 0"),
    ({"session_config": {"allow_soft_placement": True}}, "session_config must be instance of ConfigProto"),
    ({"keep_checkpoint_every_n_hours": 0}, "keep_checkpoint_every_n_hours must be a number > 0"),
    ({"device_fn": lambda operation: ""}, 'device_fn must be callable with exactly one argument "op"'),
    ({"protocol": "http"}, "protocol must be None, 'grpc' or 'grpc\\+verbs'"),
    ({"session_creation_timeout_secs": 0}, "session_creation_timeout_secs must be a number > 0"),
    ({"num_gpus": -1}, "num_gpus must be None \\(every visible GPU\\), 0 \\(the CPU\\) or a positive integer"),
    ({"precision": "mixed"}, r"RunConfig\(precision\)='mixed' is not a precision the engine knows"),
    ({"precision": "float16"}, r"RunConfig\(precision\)='float16'.*loss scaling"),
    ({"jit_compile": 1}, "jit_compile must be True or False"),
    ({"save_input_position": "no"}, "save_input_position must be True or False"),
])
def test_run_config_rejects_what_2_15_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**kwargs)


def test_num_gpus_and_train_distribute_are_one_choice(eight_replicas):
    with pytest.raises(ValueError, match=r"Set either num_gpus \(1\) or train_distribute, not both"):
        RunConfig(num_gpus=1, train_distribute=eight_replicas)


def test_experimental_distribute_supplies_the_strategies(eight_replicas):
    class DistributeConfig:
        train_distribute, eval_distribute, remote_cluster = eight_replicas, None, None

    assert RunConfig(experimental_distribute=DistributeConfig()).train_distribute is eight_replicas


# -- masters and TF_CONFIG -------------------------------------------------------------------------------


class _Resolver:
    def master(self):
        return "grpc://10.0.0.2:8470"


def test_a_cluster_names_the_master_and_evaluation_master_follows_it():
    config = RunConfig(cluster=_Resolver())
    assert (config.master, config.evaluation_master) == ("grpc://10.0.0.2:8470", "grpc://10.0.0.2:8470")
    assert config.replace(model_dir="/tmp/elsewhere").master == "grpc://10.0.0.2:8470"
    with pytest.raises(ValueError, match="Set either master .* or cluster, not both"):
        RunConfig(master="grpc://10.0.0.3:8470", cluster=_Resolver())


def test_evaluation_master_can_differ_from_master():
    config = RunConfig(master="train-tpu", evaluation_master="eval-tpu")
    assert (config.master, config.evaluation_master) == ("train-tpu", "eval-tpu")


def test_without_tf_config_the_process_is_its_own_single_worker_chief(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = RunConfig()
    assert (config.task_type, config.task_id, config.is_chief, config.num_worker_replicas, config.num_ps_replicas,
            config.global_id_in_cluster, config.master) == ("worker", 0, True, 1, 0, 0, "")
    assert config.cluster_spec.as_dict() == {}


@pytest.mark.parametrize(("task", "expected"), [
    # Values real tf.estimator 2.15 gave for this cluster (task type, id, master, chief, workers, ps, global id).
    ({"type": "worker", "index": 1}, ("worker", 1, "grpc://host4:2222", False, 4, 2, 2)),
    ({"type": "chief", "index": 0}, ("chief", 0, "grpc://host0:2222", True, 4, 2, 0)),
    ({"type": "ps", "index": 1}, ("ps", 1, "grpc://host2:2222", False, 4, 2, 5)),
    ({"type": "evaluator", "index": 0}, ("evaluator", 0, "", False, 0, 0, None)),
])
def test_cluster_properties_come_from_tf_config_as_in_2_15(monkeypatch, task, expected):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": _CLUSTER, "task": task}))
    config = RunConfig()
    assert (config.task_type, config.task_id, config.master, config.is_chief, config.num_worker_replicas,
            config.num_ps_replicas, config.global_id_in_cluster) == expected
    assert config.evaluation_master == ""  # 2.15's RunConfig: a task's own address is not evaluation's master


def test_a_worker_only_cluster_makes_worker_0_the_chief(monkeypatch):
    workers = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": workers, "task": {"type": "worker", "index": 0}}))
    assert (RunConfig().is_chief, RunConfig().num_worker_replicas) == (True, 2)


def test_model_dir_may_come_from_tf_config_but_not_disagree_with_it(monkeypatch, tmp_path):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"model_dir": str(tmp_path)}))
    assert RunConfig().model_dir == str(tmp_path)
    with pytest.raises(ValueError, match="differs from TF_CONFIG's model_dir"):
        RunConfig(model_dir=str(tmp_path / "other"))


@pytest.mark.parametrize("tf_config", [
    {"cluster": _CLUSTER, "task": {"type": "worker", "index": 7}},
    {"cluster": _CLUSTER},
    {"task": {"type": "chief", "index": 0}},
])
def test_a_tf_config_that_does_not_place_this_task_is_one_clear_error(monkeypatch, tf_config):
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    with pytest.raises(ValueError, match="TF_CONFIG"):
        RunConfig()


# -- settings without a TF2 meaning: logged once ----------------------------------------------------------


@pytest.mark.parametrize(("make", "message"), [
    (lambda: RunConfig(session_config=tf.compat.v1.ConfigProto()), "RunConfig(session_config=...) is ignored"),
    (lambda: RunConfig(keep_checkpoint_every_n_hours=1), "RunConfig(keep_checkpoint_every_n_hours=...) is ignored"),
    (lambda: RunConfig(device_fn=lambda op: "/cpu:0"), "RunConfig(device_fn=...) is ignored"),
    (lambda: RunConfig(protocol="grpc"), "RunConfig(protocol=...) is ignored"),
    (lambda: RunConfig(experimental_max_worker_delay_secs=5),
     "RunConfig(experimental_max_worker_delay_secs=...) is ignored"),
    (lambda: RunConfig(session_creation_timeout_secs=60), "RunConfig(session_creation_timeout_secs=...) is ignored"),
    (lambda: TPUConfig(tpu_job_name="tpu_worker"), "TPUConfig(tpu_job_name=...) is ignored"),
    (lambda: TPUConfig(initial_infeed_sleep_secs=30), "TPUConfig(initial_infeed_sleep_secs=...) is ignored"),
    (lambda: TPUConfig(experimental_allow_per_host_v2_parallel_get_next=True),
     "TPUConfig(experimental_allow_per_host_v2_parallel_get_next=True) is ignored"),
    (lambda: TPUConfig(experimental_feed_hook=object), "TPUConfig(experimental_feed_hook=...) is ignored"),
])
def test_a_setting_without_tf2_meaning_is_logged_once_as_ignored(caplog, make, message):
    with caplog.at_level(logging.WARNING, logger="absl"):
        make()
        make()
    assert sum(message in record.getMessage() for record in caplog.records) == 1


def test_defaults_log_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="absl"):
        RunConfig(tpu_config=TPUConfig())
    assert "is ignored" not in caplog.text


def test_replace_keeps_a_subclass_and_attributes_a_program_set_on_the_config():
    class ChiefConfig(RunConfig):
        def __init__(self, is_chief):  # a subclass with its own __init__, as 2.15's tests and programs wrote
            super().__init__()
            self._fake_chief = is_chief

    config = ChiefConfig(is_chief=False)
    config.note = "mine"
    copy = config.replace(model_dir="/tmp/elsewhere")
    assert (type(copy), copy._fake_chief, copy.note, copy.model_dir) == (ChiefConfig, False, "mine", "/tmp/elsewhere")


def test_a_setting_cannot_be_assigned_after_the_config_is_made():
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"use config.replace\(model_dir=...\)"):
        RunConfig().model_dir = "/tmp/x"


def test_tf2_parameter_server_strategy_is_refused_naming_what_to_use():
    strategy = tf.distribute.experimental.ParameterServerStrategy.__new__(
        tf.distribute.experimental.ParameterServerStrategy)
    with pytest.raises(ValueError, match="Please use `tf.compat.v1.distribute.experimental.ParameterServerStrategy`"):
        RunConfig(train_distribute=strategy)


def test_tpu_run_config_evaluation_master_follows_a_master_from_tf_config_session_master(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"session_master": "grpc://10.0.0.2:8470"}))
    assert estimators.tpu.RunConfig().evaluation_master == "grpc://10.0.0.2:8470"  # TPUEstimator's RunConfig rule


def test_run_config_evaluation_stays_local_beside_a_tf_config_session_master(monkeypatch):
    """2.15's tf.estimator.RunConfig (run_config_test's test_session_master_for_local)."""
    monkeypatch.setenv("TF_CONFIG", json.dumps({"session_master": "_my_master"}))
    config = RunConfig()
    assert (config.master, config.evaluation_master) == ("_my_master", "")


def test_tpu_run_config_adds_no_device_filters_for_a_tf_config_cluster(monkeypatch):
    """2.15's tpu.RunConfig trained in-graph: no session config where tf.estimator.RunConfig set device filters."""
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["host3:3"], "worker": ["host3:4"]},
                                                "task": {"type": "chief", "index": 0}}))
    assert estimators.tpu.RunConfig().session_config is None
    assert list(RunConfig().session_config.device_filters) == ["/job:ps", "/job:chief"]


def test_tpu_run_config_takes_a_programs_own_attributes_as_run_config_does():
    config = estimators.tpu.RunConfig()
    config._session_config = tf.compat.v1.ConfigProto(log_device_placement=True)  # what 2.15 programs did
    assert config.session_config.log_device_placement


def test_tpu_run_config_replace_keeps_the_tpu_reading():
    config = estimators.tpu.RunConfig(master="grpc://10.0.0.2:8470").replace(save_summary_steps=7)
    assert isinstance(config, estimators.tpu.RunConfig) and config.evaluation_master == "grpc://10.0.0.2:8470"
