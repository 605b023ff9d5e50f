"""RunConfig keeps model_dir and session_config in `_model_dir` / `_session_config` behind properties, as 2.15 did."""

import tensorflow as tf

from estimators import Estimator, RunConfig
from estimators.run_config import get_default_session_config


def _model_fn(features, labels):
    del features, labels


class _FixedDirConfig(RunConfig):
    @property
    def model_dir(self):
        return "/tmp/fixed_by_subclass"


def test_a_subclass_may_compute_model_dir_with_a_read_only_property():
    config = _FixedDirConfig()
    assert config.model_dir == "/tmp/fixed_by_subclass"
    assert config.replace(save_summary_steps=7).model_dir == "/tmp/fixed_by_subclass"
    assert Estimator(_model_fn, config=config).model_dir == "/tmp/fixed_by_subclass"


def test_setting_private_session_config_changes_session_config():
    config = RunConfig()
    mine = tf.compat.v1.ConfigProto(gpu_options=tf.compat.v1.GPUOptions(per_process_gpu_memory_fraction=0.3))
    config._session_config = mine  # what 2.15 programs did
    assert config.session_config is mine


def test_estimator_session_config_defaults_to_get_default_session_config():
    estimator = Estimator(_model_fn)
    assert estimator._session_config == get_default_session_config()
    assert estimator.config.session_config == estimator._session_config
