"""main.py's --iterations_per_loop: a count or a duration; by default 100 on a TPU and '30s' where steps are slow."""

import pytest

from estimators import RunConfig, TPUConfig
from launch.build import build_estimator
from launch.settings import Settings
from model_fns import get_model


@pytest.mark.parametrize(("use_tpu", "given", "loop"), [
    (False, None, "30s"), (True, None, 100), (False, "2", 2), (True, "45s", "45s"), (False, 7, 7),
])
def test_the_loop_size_by_default_and_as_given(use_tpu, given, loop):
    assert Settings(use_tpu=use_tpu, iterations_per_loop=given).resolved("synthetic").iterations_per_loop == loop


def test_a_bad_loop_size_names_the_flag_and_the_forms():
    with pytest.raises(ValueError, match=r"--iterations_per_loop: .*a duration such as '30s'"):
        Settings(iterations_per_loop="fast").resolved("synthetic")


def test_a_duration_reaches_tpu_config_and_summaries_keep_a_step_schedule(tmp_path):
    """Every 10 steps: TensorBoard's loss curve of a short CPU run has points enough to read."""
    estimator = build_estimator(Settings(model_dir=str(tmp_path), iterations_per_loop="30s"), get_model("cnn"))
    assert estimator.config.tpu_config.iterations_per_loop == "30s"
    assert estimator.config.save_summary_steps == 10


def test_tpu_config_takes_a_duration_and_the_host_call_stride():
    assert TPUConfig("30s").iterations_per_loop == "30s"
    assert RunConfig(tpu_config=TPUConfig(3, experimental_host_call_every_n_steps=2)).tpu_config \
        .experimental_host_call_every_n_steps == 2
    with pytest.raises(ValueError, match="experimental_host_call_every_n_steps must be an integer >= 1"):
        TPUConfig(experimental_host_call_every_n_steps=0)
