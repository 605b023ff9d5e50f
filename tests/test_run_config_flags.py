"""--num_gpus and --precision: main.py's flags -> Settings -> RunConfig(num_gpus=..., precision=...) of the run's
TPUEstimator."""

import pytest
from absl import flags
from absl import logging as absl_logging

import main
from estimators import precision
from launch.build import build_estimator
from launch.settings import Settings

FLAGS = flags.FLAGS


def _settings(*argv: str) -> Settings:
    """main.py's Settings for argv; absl's logger level, which parsing --verbosity sets, is put back after."""
    level = absl_logging.get_absl_logger().level
    FLAGS.unparse_flags()
    try:
        FLAGS(["main.py", *argv])
        return main.settings_from_flags()
    finally:
        FLAGS.unparse_flags()
        absl_logging.get_absl_logger().setLevel(level)


def test_num_gpus_flag_reaches_the_estimators_run_config(tmp_path):
    settings = _settings("--num_gpus=0", f"--model_dir={tmp_path}").resolved("fashion_mnist")
    assert settings.num_gpus == 0
    assert build_estimator(settings, main.model_fns.get_model("cnn")).config.num_gpus == 0


def test_without_the_flag_every_visible_gpu_is_used():
    assert _settings().num_gpus is None


def test_num_gpus_with_use_tpu_is_one_clear_error():
    with pytest.raises(ValueError, match=r"--num_gpus=1 picks GPUs, but --use_tpu runs on the TPU"):
        _settings("--use_tpu", "--num_gpus=1").resolved("fashion_mnist")


def test_a_negative_num_gpus_is_refused_by_the_flag():
    with pytest.raises(flags.IllegalFlagValueError):
        _settings("--num_gpus=-1")


def test_precision_flag_reaches_the_run_config_not_params(tmp_path):
    settings = _settings("--precision=bfloat16", f"--model_dir={tmp_path}").resolved("fashion_mnist")
    estimator = build_estimator(settings, main.model_fns.get_model("cnn"))
    assert estimator.config.precision == "bfloat16"
    assert "precision" not in estimator.params
    assert precision.resolve(estimator.config, estimator.params) == "bfloat16"


def test_without_the_precision_flag_the_run_is_float32(tmp_path):
    estimator = build_estimator(_settings(f"--model_dir={tmp_path}").resolved("fashion_mnist"),
                                main.model_fns.get_model("cnn"))
    assert precision.resolve(estimator.config, estimator.params) == "float32"
