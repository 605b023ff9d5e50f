"""The engine's shape as issue 28 set it: a thin Estimator over two executors that see one frozen context, and
TPUEstimator as a constructor over a deployment (no private overrides of the Estimator's members)."""

from __future__ import annotations

import dataclasses
import inspect
import pathlib

import pytest

from estimators import Estimator, RunConfig, TPUEstimator
from estimators.engine_context import EngineContext
from estimators.mode_keys import ModeKeys
from tests import engine_models as m


def _methods(cls: type) -> set[str]:
    return {name for name, value in vars(cls).items()
            if inspect.isfunction(value) or isinstance(value, (property, staticmethod, classmethod))}


def test_the_estimator_has_fewer_than_25_methods():
    assert len(_methods(Estimator)) < 25, sorted(_methods(Estimator))


def test_the_top_level_holds_about_ten_modules_and_every_other_file_lives_in_a_package():
    top = sorted(path.name for path in (pathlib.Path(__file__).parent.parent / "estimators").glob("*.py"))
    assert len(top) - 1 <= 10, top  # __init__.py aside


def test_tpu_estimator_replaces_no_estimator_member_but_its_constructor_and_argument_check():
    overridden = {name for name in _methods(TPUEstimator) if hasattr(Estimator, name)}
    assert overridden == {"__init__", "_verify_model_fn_args"}


def test_the_executors_context_is_frozen(tmp_path):
    context = Estimator(m.linear_model_fn, model_dir=str(tmp_path))._context
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.params = {}
    assert isinstance(context, EngineContext) and context.model_dir == str(tmp_path)


def test_a_tpu_deployment_gives_model_fn_the_per_replica_batch_and_export_no_tpu(tmp_path, eight_replicas):
    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas)
    estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=False, train_batch_size=64, params={"lr": 0.1})
    deployment = estimator._deployment
    strategy = deployment.strategy(ModeKeys.TRAIN)
    assert strategy.num_replicas_in_sync == 8
    assert deployment.global_batch_size(ModeKeys.TRAIN) == 64
    assert deployment.model_fn_batch_size(ModeKeys.TRAIN, strategy) == 8
    assert deployment.export_params() == {"lr": 0.1, "use_tpu": False}
    assert estimator.params == {"lr": 0.1}  # an export never swaps the Estimator's own params


def test_a_plain_deployment_passes_params_unchanged_and_lets_input_fn_batch(tmp_path):
    deployment = Estimator(m.linear_model_fn, model_dir=str(tmp_path), params={"lr": 0.1})._deployment
    strategy = deployment.strategy(ModeKeys.TRAIN)
    assert deployment.global_batch_size(ModeKeys.TRAIN) is None
    assert deployment.model_fn_batch_size(ModeKeys.TRAIN, strategy) is None
    assert deployment.params_for_model_fn({"lr": 0.1}, None) == {"lr": 0.1}
