"""RunConfig's default session_config for a between-graph cluster (2.15's device filters), and the default config."""

import json
import logging

import pytest
import tensorflow as tf

from estimators import RunConfig
from estimators.compat.ignored_settings import forget_logged
from estimators.run_config import get_default_session_config

_CLUSTER = {"chief": ["host0:0"], "ps": ["host1:1"], "worker": ["host2:2", "host3:3"]}


def _config_for(monkeypatch, task_type, index=0, **kwargs):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": _CLUSTER, "task": {"type": task_type, "index": index}}))
    return RunConfig(**kwargs)


@pytest.mark.parametrize(("task_type", "index", "filters"), [
    ("chief", 0, ["/job:ps", "/job:chief"]),
    ("worker", 1, ["/job:ps", "/job:worker/task:1"]),
    ("ps", 0, ["/job:ps", "/job:worker", "/job:chief", "/job:master"]),
])
def test_each_task_of_a_cluster_gets_2_15s_device_filters(monkeypatch, task_type, index, filters):
    config = _config_for(monkeypatch, task_type, index)
    assert list(config.session_config.device_filters) == filters
    assert config.session_config.allow_soft_placement


def test_an_evaluator_gets_none(monkeypatch):
    assert _config_for(monkeypatch, "evaluator").session_config is None


def test_without_a_cluster_there_is_none():
    assert RunConfig().session_config is None


def test_a_given_session_config_is_kept(monkeypatch):
    mine = tf.compat.v1.ConfigProto(log_device_placement=True)
    assert _config_for(monkeypatch, "chief", session_config=mine).session_config is mine


def test_a_strategy_leaves_it_unset(monkeypatch):
    config = _config_for(monkeypatch, "chief", train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"))
    assert config.session_config is None


def test_the_default_is_not_logged_as_an_ignored_setting(monkeypatch, caplog):
    forget_logged()
    with caplog.at_level(logging.INFO):
        _config_for(monkeypatch, "chief")
    assert "session_config" not in caplog.text


def test_get_default_session_config_is_soft_placement_with_one_meta_optimizer_round():
    config = get_default_session_config()
    assert config.allow_soft_placement
    assert config.graph_options.rewrite_options.meta_optimizer_iterations == 1


def test_a_chiefless_cluster_without_a_task_names_the_missing_chief(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["host0:0"]}}))
    with pytest.raises(ValueError, match='it must have one "chief" node'):
        RunConfig()
