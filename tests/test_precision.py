"""precision="bfloat16": Keras's mixed_bfloat16 around each model_fn call (float32 variables and loss)."""

import threading
import types

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec, precision
from input_fns.synthetic import make_source
from model_fns import get_model
from tests import engine_models as m


def _recording_model_fn(seen: list, loss_in_float32: bool = True):
    """The linear model; records (thread, policy, logits dtype, variable dtypes) of every call."""

    def model_fn(features, labels, mode, params):
        layer = keras.layers.Dense(m.CLASSES)
        logits = layer(features)
        seen.append((threading.get_ident(), keras.config.dtype_policy().name, logits.dtype,
                     {v.dtype for v in layer.weights}))
        if loss_in_float32:
            logits = tf.cast(logits, tf.float32)
        if mode == ModeKeys.PREDICT:
            return TPUEstimatorSpec(mode, predictions={"logits": tf.cast(logits, tf.float32)})
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        if mode == ModeKeys.TRAIN:
            train_op = CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss)
            return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
        return TPUEstimatorSpec(mode, loss=loss)

    return model_fn


def _estimator(tmp_path, model_fn, params=None, strategy=None):
    config = RunConfig(model_dir=str(tmp_path), train_distribute=strategy, tpu_config=TPUConfig(iterations_per_loop=1))
    return TPUEstimator(model_fn, config=config, params=params or {}, use_tpu=False, train_batch_size=16,
                        eval_batch_size=16, predict_batch_size=16)


def test_bfloat16_model_fn_computes_in_bfloat16_with_float32_variables_and_checkpoint(tmp_path):
    seen = []
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, _recording_model_fn(seen), {"precision": "bfloat16"})
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    assert {(policy, dtype) for _, policy, dtype, _ in seen} == {("mixed_bfloat16", tf.bfloat16)}
    assert {dtype for *_, dtypes in seen for dtype in dtypes} == {"float32"}
    assert estimator.get_variable_value("dense/kernel").dtype == np.float32


def test_float32_is_the_default(tmp_path):
    seen = []
    x, y = m.dataset(32)
    _estimator(tmp_path, _recording_model_fn(seen)).train(m.train_input_fn(x, y), max_steps=1)
    assert {(policy, dtype) for _, policy, dtype, _ in seen} == {("float32", tf.float32)}


def test_every_replica_thread_computes_in_bfloat16_and_the_callers_policy_is_restored(tmp_path, eight_replicas):
    seen = []
    x, y = m.dataset(64)
    estimator = _estimator(tmp_path, _recording_model_fn(seen), {"precision": "bfloat16"}, strategy=eight_replicas)
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    assert len({thread for thread, *_ in seen}) >= 8
    assert {(policy, dtype) for _, policy, dtype, _ in seen} == {("mixed_bfloat16", tf.bfloat16)}
    assert keras.config.dtype_policy().name == "float32"


def test_a_bfloat16_train_loss_is_refused_with_the_cast_to_make(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, _recording_model_fn([], loss_in_float32=False), {"precision": "bfloat16"})
    with pytest.raises(ValueError, match=r"TRAIN loss is bfloat16.*tf.cast\(logits, tf.float32\)"):
        estimator.train(m.train_input_fn(x, y), max_steps=1)


def test_an_unknown_precision_names_the_choices_and_float16_says_why_not(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, _recording_model_fn([]), {"precision": "float16"})
    with pytest.raises(ValueError, match=r"params\['precision'\]='float16'.*\['float32', 'bfloat16'\].*loss scaling"):
        estimator.train(m.train_input_fn(x, y), max_steps=1)


def test_run_config_or_params_sets_the_precision_and_float32_is_the_default():
    assert precision.resolve(RunConfig(), {}) == "float32"
    assert precision.resolve(RunConfig(precision="bfloat16"), {}) == "bfloat16"
    assert precision.resolve(RunConfig(), {"precision": "bfloat16"}) == "bfloat16"
    assert precision.resolve(RunConfig(precision="bfloat16"), {"precision": "bfloat16"}) == "bfloat16"
    assert precision.resolve(types.SimpleNamespace(), {}) == "float32"  # a config without the field


@pytest.mark.parametrize(("config", "params"), [("bfloat16", "float32"), ("float32", "bfloat16")])
def test_run_config_and_params_that_disagree_explicitly_are_an_error_either_way(config, params):
    with pytest.raises(ValueError, match=rf"RunConfig\(precision='{config}'\) and params\['precision'\]='{params}' "
                                         "disagree"):
        precision.resolve(RunConfig(precision=config), {"precision": params})


def test_run_config_precision_reaches_every_replica_thread(tmp_path, eight_replicas):
    seen = []
    x, y = m.dataset(64)
    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas, precision="bfloat16",
                       tpu_config=TPUConfig(iterations_per_loop=1))
    estimator = TPUEstimator(_recording_model_fn(seen), config=config, use_tpu=False, train_batch_size=16)
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    assert len({thread for thread, *_ in seen}) >= 8
    assert {(policy, dtype) for _, policy, dtype, _ in seen} == {("mixed_bfloat16", tf.bfloat16)}


def test_a_keras_global_policy_that_differs_from_the_setting_is_refused(tmp_path):
    x, y = m.dataset(32)
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        with pytest.raises(ValueError, match=r"global dtype policy is 'mixed_bfloat16'.*precision is 'float32'"):
            _estimator(tmp_path, _recording_model_fn([])).train(m.train_input_fn(x, y), max_steps=1)
    finally:
        keras.config.set_dtype_policy("float32")


def test_the_cnn_evaluates_a_float32_checkpoint_in_bfloat16_to_nearly_the_same_loss(tmp_path):
    """Same float32 weights, bfloat16 compute: the loss within 2% and the same predicted classes almost always."""
    cnn = get_model("cnn")
    data = make_source(image_shape=cnn.image_shape)
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(iterations_per_loop=5))

    def estimator(precision_setting):
        return TPUEstimator(cnn.model_fn, config=config, params=dict(cnn.default_params, precision=precision_setting),
                            use_tpu=False, train_batch_size=32, eval_batch_size=256, predict_batch_size=256)

    estimator("float32").train(data.input_fn("train", seed=1), max_steps=10)
    results = {p: estimator(p).evaluate(data.input_fn("eval"), steps=1) for p in ("float32", "bfloat16")}
    assert results["bfloat16"]["loss"] == pytest.approx(results["float32"]["loss"], rel=0.02)
    classes = {p: np.array([int(r["classes"]) for r in estimator(p).predict(data.input_fn("infer"))][:256])
               for p in ("float32", "bfloat16")}
    assert np.mean(classes["float32"] == classes["bfloat16"]) >= 0.95
