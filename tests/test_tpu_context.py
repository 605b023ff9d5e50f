"""params['context'] (TPUEstimator 2.15's TPUContext, also the InputContext) and params['use_tpu'].

2.15 (tpu_estimator.py, _call_input_fn / _ModelFnWrapper._call_model_fn): model_fn's
params['use_tpu'] says whether that call runs on the TPU (False with use_tpu=False, for evaluation
with eval_on_tpu=False, and for export's CPU graph); input_fn never gets 'use_tpu'.
"""

import itertools

import pytest
import tensorflow as tf

from estimators import RunConfig, TPUEstimator
from estimators.compat.tpu_context import TPUContext
from estimators.distribute import platform as platform_lib
from estimators.distribute.platform import Platform
from estimators.export import TensorServingInputReceiver
from tests import engine_models as m

_masters = itertools.count()


class _Resolver:
    def __init__(self, tpu):
        self._master = f"grpc://fake-tpu-{next(_masters)}:8470"

    def master(self):
        return self._master


def _fake_tpu(tpu_strategy: tf.distribute.Strategy) -> Platform:
    """A platform whose 'TPU' is `tpu_strategy` (the 8 logical CPUs stand in for 8 cores); no GPUs."""
    return Platform(
        physical_devices=lambda kind: [tf.config.PhysicalDevice("/physical_device:TPU:0", "TPU")] if kind == "TPU"
        else [],
        logical_devices=lambda kind: [],
        tpu_resolver=_Resolver,
        connect=lambda resolver: None,
        initialize=lambda resolver: None,
        tpu_strategy=lambda resolver: tpu_strategy,
        mirrored_strategy=lambda names: pytest.fail("no GPUs here"),
        one_device_strategy=lambda name: pytest.fail("no GPUs here"),
        default_strategy=tf.distribute.get_strategy,
    )


class Seen:
    """The params model_fn and input_fn were given, by mode (model_fn: the last replica traced)."""

    def __init__(self):
        self.model_fn: dict = {}
        self.input_fn: dict = {}

    def wrap_model_fn(self, model_fn):
        def recorded(features, labels, mode, params):
            self.model_fn[mode] = dict(params)
            return model_fn(features, labels, mode, params)

        return recorded

    def wrap_input_fn(self, input_fn, mode):
        def recorded(params):
            self.input_fn[mode] = dict(params)
            return input_fn(params)

        return recorded


def _receiver():
    x = tf.compat.v1.placeholder(tf.float32, [None, m.FEATURES])
    return TensorServingInputReceiver(x, {"x": x})


@pytest.mark.parametrize("replicas", [1, 8])
def test_context_answers_tpucontext_questions_in_input_fn_and_model_fn(tmp_path, eight_replicas, replicas):
    seen, (x, y) = Seen(), m.dataset(32)
    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas if replicas == 8 else None)
    estimator = TPUEstimator(seen.wrap_model_fn(m.linear_model_fn), config=config, use_tpu=False,
                             train_batch_size=16)
    estimator.train(seen.wrap_input_fn(m.train_input_fn(x, y), "train"), max_steps=1)

    ctx = seen.input_fn["train"]["context"]
    assert isinstance(ctx, TPUContext) and isinstance(ctx, tf.distribute.InputContext)
    assert (ctx.num_replicas, ctx.num_hosts, ctx.num_of_replicas_per_host, ctx.current_host) == (replicas, 1,
                                                                                                 replicas, 0)
    assert ctx.current_input_fn_deployment() == ("/replica:0/task:0/device:CPU:0", 0, 1, replicas)
    assert (ctx.num_replicas_in_sync, ctx.num_input_pipelines, ctx.input_pipeline_id) == (replicas, 1, 0)
    assert ctx.get_per_replica_batch_size(16) == 16 // replicas
    assert ctx.is_running_on_cpu()
    with pytest.raises(RuntimeError, match="device_assignment answers only in model_fn"):
        ctx.device_assignment  # noqa: B018

    assert "context" not in seen.model_fn["train"]  # 2.15 gave model_fn a context on the TPU only


def test_use_tpu_param_says_where_each_call_runs_and_input_fn_never_gets_it(tmp_path, eight_replicas):
    seen, (x, y) = Seen(), m.dataset(32)
    with platform_lib.using(_fake_tpu(eight_replicas)):
        estimator = TPUEstimator(seen.wrap_model_fn(m.linear_model_fn), config=RunConfig(model_dir=str(tmp_path)),
                                 use_tpu=True, eval_on_tpu=False, export_to_tpu=False, train_batch_size=16,
                                 eval_batch_size=16, predict_batch_size=16)
        estimator.train(seen.wrap_input_fn(m.train_input_fn(x, y), "train"), max_steps=1)
        estimator.evaluate(seen.wrap_input_fn(m.eval_input_fn(x, y), "eval"))
        list(estimator.predict(seen.wrap_input_fn(m.predict_input_fn(x), "infer")))
    train, evaluation, predict = (seen.model_fn[mode] for mode in ("train", "eval", "infer"))
    assert (train["use_tpu"], train["batch_size"], train["context"].num_replicas) == (True, 2, 8)
    ctx = train["context"]
    assert not ctx.is_running_on_cpu()
    assert (ctx.num_replicas, ctx.num_hosts, ctx.num_of_replicas_per_host) == (8, 1, 8)
    assert ctx.device_assignment is None
    with pytest.raises(RuntimeError, match="current_host answers only in input_fn"):
        ctx.current_host  # noqa: B018
    with pytest.raises(RuntimeError, match=r"current_input_fn_deployment\(\) answers only in input_fn"):
        ctx.current_input_fn_deployment()
    # eval_on_tpu=False moves evaluation, and only evaluation, off the TPU (here: the CPU, one replica), where
    # 2.15's model_fn got no context.
    assert (evaluation["use_tpu"], evaluation["batch_size"]) == (False, 16) and "context" not in evaluation
    assert (predict["use_tpu"], predict["batch_size"], predict["context"].num_replicas) == (True, 2, 8)
    assert all("use_tpu" not in params for params in seen.input_fn.values())
    assert [seen.input_fn[mode]["batch_size"] for mode in ("train", "eval", "infer")] == [16, 16, 16]

    seen.model_fn.clear()
    estimator.export_saved_model(str(tmp_path / "export"), _receiver)
    assert sorted(seen.model_fn["infer"]) == ["use_tpu"]  # 2.15's CPU serving graph: no batch size, no context
    assert seen.model_fn["infer"]["use_tpu"] is False


def test_use_tpu_false_gives_model_fn_use_tpu_false(tmp_path):
    seen, (x, y) = Seen(), m.dataset(16)
    estimator = TPUEstimator(seen.wrap_model_fn(m.linear_model_fn), config=RunConfig(model_dir=str(tmp_path)),
                             use_tpu=False, train_batch_size=16)
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    assert seen.model_fn["train"]["use_tpu"] is False
    assert seen.model_fn["train"]["batch_size"] == 16


def test_tf_compat_v1_estimator_tpu_names_are_in_estimators_tpu():
    from estimators import tpu

    assert tpu.InputPipelineConfig.PER_HOST_V2 == 3
    assert tpu.TPUContext is TPUContext
    assert {"RunConfig", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec"} <= set(tpu.__all__)
