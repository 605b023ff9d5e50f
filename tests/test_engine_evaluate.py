"""Evaluation sees every example once (metrics exact; the loss 2.15's mean over batches), uses the trained weights,
and resets its metrics."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import (
    CrossShardOptimizer,
    Estimator,
    EvalSpec,
    ModeKeys,
    RunConfig,
    TPUConfig,
    TPUEstimator,
    TPUEstimatorSpec,
    TrainSpec,
    train_and_evaluate,
)
from tests import engine_models as m


def _estimator(model_dir, strategy=None, model_fn=m.linear_model_fn, iterations=3, **config):
    settings = dict(model_dir=str(model_dir), train_distribute=strategy, tpu_config=TPUConfig(iterations))
    settings.update(config)
    return TPUEstimator(model_fn, config=RunConfig(**settings), use_tpu=False, train_batch_size=16,
                        eval_batch_size=16, predict_batch_size=16)


def _kernel_bias(estimator):
    return tuple(estimator.get_variable_value(f"sequential/dense/{name}") for name in ("kernel", "bias"))


def test_evaluate_after_train_uses_the_trained_weights_exactly(tmp_path):
    x, y = m.dataset(101)
    estimator = _estimator(tmp_path).train(m.train_input_fn(x, y), max_steps=12)
    result = estimator.evaluate(m.eval_input_fn(x, y))
    loss, accuracy = m.numpy_eval(*_kernel_bias(estimator), x, y, batch_size=16)
    assert result["global_step"] == 12
    assert result["examples"] == 101
    assert result["loss"] == pytest.approx(loss, rel=1e-5)
    assert result["accuracy"] == pytest.approx(accuracy)


def test_evaluate_steps_limits_the_batches_read(tmp_path):
    x, y = m.dataset(100)
    estimator = _estimator(tmp_path).train(m.train_input_fn(x, y), max_steps=2)
    result = estimator.evaluate(m.eval_input_fn(x, y), steps=4)
    loss, _ = m.numpy_eval(*_kernel_bias(estimator), x[:64], y[:64])
    assert result["examples"] == 64
    assert result["loss"] == pytest.approx(loss, rel=1e-5)


def test_metrics_are_reset_at_every_evaluate(tmp_path):
    x, y = m.dataset(40)
    estimator = _estimator(tmp_path).train(m.train_input_fn(x, y), max_steps=2)
    first = estimator.evaluate(m.eval_input_fn(x, y))
    second = estimator.evaluate(m.eval_input_fn(x, y))
    assert first["examples"] == second["examples"] == 40
    assert first == second


def test_evaluate_writes_tensorboard_summaries_under_eval_name(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path).train(m.train_input_fn(x, y), max_steps=2)
    estimator.evaluate(m.eval_input_fn(x, y), name="holdout")
    events = tf.io.gfile.glob(os.path.join(str(tmp_path), "eval_holdout", "events.out.tfevents.*"))
    assert events
    tags = {v.tag for e in tf.compat.v1.train.summary_iterator(events[0]) for v in e.summary.value}
    assert {"loss", "accuracy", "examples"} <= tags


def test_training_writes_loss_and_step_rate_summaries(tmp_path):
    x, y = m.dataset(32)
    _estimator(tmp_path, save_summary_steps=1).train(m.train_input_fn(x, y), max_steps=6)
    events = tf.io.gfile.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))
    tags = {v.tag for e in tf.compat.v1.train.summary_iterator(events[0]) for v in e.summary.value}
    assert {"loss", "global_step/sec", "examples/sec", "learning_rate"} <= tags


def _batchnorm_model_fn(features, labels, mode, params):
    model = keras.Sequential([keras.layers.BatchNormalization(momentum=0.5), keras.layers.Dense(m.CLASSES)])
    logits = model(features, training=mode == ModeKeys.TRAIN)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == ModeKeys.TRAIN:
        return TPUEstimatorSpec(mode, loss=loss, train_op=CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss))
    return TPUEstimatorSpec(mode, loss=loss)


def test_batchnorm_moving_statistics_update_during_training_on_every_replica(tmp_path, eight_replicas):
    x, y = m.dataset(64)
    x = x * 3.0 + 5.0
    estimator = _estimator(tmp_path, eight_replicas, _batchnorm_model_fn)
    estimator.train(m.train_input_fn(x, y), max_steps=10)
    moving_mean = estimator.get_variable_value("sequential/batch_normalization/moving_mean")
    np.testing.assert_allclose(moving_mean, x.mean(axis=0), atol=1.0)  # started at 0
    runtime = next(iter(estimator._runtimes.values()))
    replicas = [v.numpy() for v in runtime.store.variables()["sequential/batch_normalization/moving_mean"].values]
    for copy in replicas[1:]:
        np.testing.assert_allclose(copy, replicas[0], rtol=1e-6)


def test_estimator_with_a_partial_last_batch_reports_2_15s_batch_mean_loss_and_exact_metrics(tmp_path,
                                                                                             eight_replicas):
    x, y = m.dataset(45)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(16)

    def train_input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16)

    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas)
    estimator = Estimator(m.keras_metrics_model_fn, config=config)
    estimator.train(train_input_fn, steps=3)
    result = estimator.evaluate(input_fn)
    weights = _kernel_bias(estimator)
    _, accuracy = m.numpy_eval(*weights, x, y)
    batch_losses = [m.numpy_eval(*weights, x[i:i + 16], y[i:i + 16])[0] for i in range(0, 45, 16)]
    assert result["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)  # the 13-row batch weighs as one
    assert result["accuracy"] == pytest.approx(accuracy)
    assert len(list(estimator.predict(input_fn))) == 45


def test_eval_metric_ops_on_a_static_shape_path_point_to_eval_metrics(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, model_fn=m.keras_metrics_model_fn).train(m.train_input_fn(x, y), max_steps=1)
    with pytest.raises(ValueError, match=r"TPUEstimatorSpec\(eval_metrics=\(metric_fn, tensors\)\)"):
        estimator.evaluate(m.eval_input_fn(x, y))


def _eval_steps(model_dir):
    events = tf.io.gfile.glob(os.path.join(str(model_dir), "eval", "events.out.tfevents.*"))
    return sorted({e.step for f in events for e in tf.compat.v1.train.summary_iterator(f) if e.summary.value})


def test_train_and_evaluate_evaluates_after_every_checkpoint_without_throttle_and_at_the_end(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, save_checkpoints_steps=4)
    result, exports = train_and_evaluate(estimator, TrainSpec(m.train_input_fn(x, y), max_steps=10),
                                         EvalSpec(m.eval_input_fn(x, y), steps=None, throttle_secs=0))
    assert result["global_step"] == 10 and exports == []
    # Checkpoints are saved at the first loop boundary (3 steps a loop) past each multiple of 4, as
    # TPUEstimator's saver did with steps_per_run: 6, 9, and the end.
    assert _eval_steps(tmp_path) == [6, 9, 10]


def test_train_and_evaluate_throttles_evaluations_as_tf_estimator_did(tmp_path):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, save_checkpoints_steps=4)
    train_and_evaluate(estimator, TrainSpec(m.train_input_fn(x, y), max_steps=10),
                       EvalSpec(m.eval_input_fn(x, y), steps=None))  # throttle_secs=600: the first save, then the end
    assert _eval_steps(tmp_path) == [6, 10]


def test_train_and_evaluate_with_finite_train_input_ends_at_the_end_of_the_input(tmp_path):
    x, y = m.dataset(48)  # three batches of 16, once

    def one_epoch(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(params["batch_size"], drop_remainder=True)

    result, _ = train_and_evaluate(_estimator(tmp_path), TrainSpec(one_epoch, max_steps=1000),
                                   EvalSpec(m.eval_input_fn(x, y), steps=None))
    assert result["global_step"] == 3


def test_predict_by_batch_and_with_predict_keys(tmp_path):
    x, y = m.dataset(37)
    estimator = _estimator(tmp_path).train(m.train_input_fn(x, y), max_steps=1)
    batches = list(estimator.predict(m.predict_input_fn(x), predict_keys=["classes"], yield_single_examples=False))
    assert [len(b["classes"]) for b in batches] == [16, 16, 5]
    assert set(batches[0]) == {"classes"}
    with pytest.raises(ValueError, match=r"predict_keys \['nope'\]"):
        list(estimator.predict(m.predict_input_fn(x), predict_keys=["nope"]))


def test_predict_by_batch_on_eight_replicas_yields_global_batches_as_tpu_estimator_did(tmp_path, eight_replicas):
    x, y = m.dataset(37)
    estimator = _estimator(tmp_path, eight_replicas).train(m.train_input_fn(x, y), max_steps=1)
    batches = list(estimator.predict(m.predict_input_fn(x), yield_single_examples=False))
    assert [len(b["classes"]) for b in batches] == [16, 16, 5]  # predict_batch_size rows per step, not per core


def test_estimator_predict_by_batch_yields_input_fns_batches_whatever_the_loop(tmp_path):
    x, y = m.dataset(37)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(x).batch(10)

    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(iterations_per_loop=50))
    estimator = Estimator(m.keras_metrics_model_fn, config=config)
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(10), steps=1)
    batches = list(estimator.predict(input_fn, yield_single_examples=False))
    assert [len(b) for b in batches] == [10, 10, 10, 7]


def test_iterations_per_loop_runs_many_steps_per_compiled_call(tmp_path, monkeypatch):
    x, y = m.dataset(32)
    estimator = _estimator(tmp_path, iterations=50).train(m.train_input_fn(x, y), max_steps=1)
    runtime = next(iter(estimator._runtimes.values()))
    loop, _ = runtime.train_loop(16, estimator._stop.variable)
    traces, calls = loop.tracing_count(), []
    real_call = type(loop).__call__
    monkeypatch.setattr(type(loop), "__call__", lambda self, it, n: calls.append(n) or real_call(self, it, n))
    estimator.train(m.train_input_fn(x, y), max_steps=121)
    assert calls == [50, 50, 20]
    assert loop.tracing_count() == traces  # no retrace, also for the shorter last loop
    assert estimator.get_variable_value("global_step") == 121


def test_jit_compile_trains_evaluates_and_predicts_with_xla(tmp_path):
    x, y = m.dataset(45)
    estimator = _estimator(tmp_path, jit_compile=True).train(m.train_input_fn(x, y), max_steps=6)
    result = estimator.evaluate(m.eval_input_fn(x, y))
    loss, _ = m.numpy_eval(*_kernel_bias(estimator), x, y, batch_size=16)
    assert result["loss"] == pytest.approx(loss, rel=1e-5)
    assert len(list(estimator.predict(m.predict_input_fn(x)))) == 45


def test_jit_compile_over_several_cpu_replicas_is_a_clear_error(tmp_path, eight_replicas):
    x, y = m.dataset(32)
    with pytest.raises(ValueError, match=r"jit_compile=True\) runs on one replica, not 8"):
        _estimator(tmp_path, eight_replicas, jit_compile=True).train(m.train_input_fn(x, y), max_steps=1)


def test_training_logs_step_loss_and_rates_every_log_step_count_steps(tmp_path, caplog):
    import logging

    x, y = m.dataset(32)
    with caplog.at_level(logging.DEBUG, logger="absl"):  # INFO when the progress display is off, DEBUG beside it
        _estimator(tmp_path, iterations=2, log_step_count_steps=4).train(m.train_input_fn(x, y), max_steps=8)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("global_step = ")]
    assert [line.split(",")[0] for line in lines] == ["global_step = 4", "global_step = 8"]
    assert all("loss = " in line and "steps/sec = " in line and "examples/sec = " in line for line in lines)


def _as_evaluator(monkeypatch, index=0):
    tf_config = {"cluster": {"chief": ["localhost:2222"]}, "task": {"type": "evaluator", "index": index}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))


def test_an_evaluator_task_evaluates_the_trainers_checkpoint_and_trains_nothing(tmp_path, monkeypatch):
    x, y = m.dataset(32)
    trained = _estimator(tmp_path, save_checkpoints_steps=3).train(m.train_input_fn(x, y), max_steps=6)
    checkpoints = sorted(os.listdir(tmp_path))
    _as_evaluator(monkeypatch)
    evaluator = _estimator(tmp_path)
    assert evaluator.config.task_type == "evaluator"
    result, _ = train_and_evaluate(evaluator, TrainSpec(m.train_input_fn(x, y), max_steps=6),
                                   EvalSpec(m.eval_input_fn(x, y), steps=None, start_delay_secs=0, throttle_secs=0))
    assert result["global_step"] == 6
    assert result["loss"] == pytest.approx(trained.evaluate(m.eval_input_fn(x, y))["loss"])
    assert sorted(f for f in os.listdir(tmp_path) if f != "eval") == checkpoints


def test_a_second_evaluator_task_is_refused_as_in_2_15(tmp_path, monkeypatch):
    _as_evaluator(monkeypatch, index=1)
    x, y = m.dataset(32)
    with pytest.raises(ValueError, match="takes one evaluator, with index 0"):
        train_and_evaluate(_estimator(tmp_path), TrainSpec(m.train_input_fn(x, y), max_steps=6),
                           EvalSpec(m.eval_input_fn(x, y), start_delay_secs=0))
