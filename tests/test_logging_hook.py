"""LoggingTensorHook: named model_fn tensors logged every N steps (counted per step, across loops), or at the end."""

import logging

import keras
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, LoggingTensorHook, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from tests import engine_models as m


def _model_fn(spec_hooks=lambda loss: ()):
    def model_fn(features, labels, mode, params):
        logits = m.linear_model()(features)
        tf.nn.softmax(logits, name="probabilities")
        tf.identity(tf.compat.v1.train.get_global_step(), name="seen_step")
        tf.identity(tf.shape(features)[0], name="rows")
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        train_op = CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss)
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=list(spec_hooks(loss)))

    return model_fn


def _train(model_dir, model_fn, hooks=(), steps=7, iterations=3, strategy=None):
    config = RunConfig(model_dir=str(model_dir), train_distribute=strategy, tpu_config=TPUConfig(iterations))
    estimator = TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=16)
    return estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=steps, hooks=list(hooks))


def _recorder():
    records = []
    return records, lambda values: records.append(values) or "recorded"


def test_named_tensors_are_logged_every_n_steps_counted_per_step_across_loops(tmp_path):
    records, formatter = _recorder()
    hook = LoggingTensorHook({"step": "seen_step", "probs": "probabilities:0"}, every_n_iter=2, formatter=formatter)
    _train(tmp_path, _model_fn(), hooks=[hook], steps=7, iterations=3)
    assert [int(r["step"]) for r in records] == [0, 2, 4, 6]  # loops of 3 steps: 0-2, 3-5, 6
    assert records[0]["probs"].shape == (16, m.CLASSES)


def test_the_default_format_is_tf_estimators(tmp_path, caplog):
    hook = LoggingTensorHook(["seen_step"], every_n_iter=3)
    with caplog.at_level(logging.INFO, logger="absl"):
        _train(tmp_path, _model_fn(), hooks=[hook], steps=4, iterations=2)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("seen_step = ")]
    assert lines[0] == "seen_step = 0"
    assert lines[1].startswith("seen_step = 3 (") and lines[1].endswith(" sec)")
    assert len(lines) == 2


def test_a_hook_returned_by_model_fn_logs_its_tensor_objects(tmp_path):
    records, formatter = _recorder()
    _train(tmp_path, _model_fn(lambda loss: [LoggingTensorHook({"loss": loss}, every_n_iter=1, formatter=formatter)]),
           steps=3, iterations=2)
    assert len(records) == 3
    assert all(0 < r["loss"] < 5 and r["loss"].shape == () for r in records)


def test_at_end_logs_the_last_steps_values_once(tmp_path):
    records, formatter = _recorder()
    _train(tmp_path, _model_fn(), hooks=[LoggingTensorHook({"step": "seen_step"}, at_end=True, formatter=formatter)],
           steps=5, iterations=2)
    assert [int(r["step"]) for r in records] == [4]


def test_under_replicas_the_first_replicas_values_are_logged(tmp_path, eight_replicas):
    records, formatter = _recorder()
    hook = LoggingTensorHook({"rows": "rows", "step": "seen_step"}, every_n_iter=1, formatter=formatter)
    _train(tmp_path, _model_fn(), hooks=[hook], steps=2, iterations=2, strategy=eight_replicas)
    assert [(int(r["rows"]), int(r["step"])) for r in records] == [(2, 0), (2, 1)]


def test_an_unknown_tensor_name_says_how_to_name_it(tmp_path):
    with pytest.raises(ValueError, match=r"no tensor named 'probs'.*tf.identity"):
        _train(tmp_path, _model_fn(), hooks=[LoggingTensorHook({"p": "probs"}, every_n_iter=1)], steps=1)


def test_a_tensor_object_in_train_hooks_points_to_names_or_training_hooks(tmp_path):
    hook = LoggingTensorHook({"c": tf.constant(1.0)}, every_n_iter=1)
    with pytest.raises(ValueError, match=r"Name it .* or return the hook from model_fn"):
        _train(tmp_path, _model_fn(), hooks=[hook], steps=1)


@pytest.mark.parametrize("kwargs", [{}, {"every_n_iter": 1, "every_n_secs": 1}, {"every_n_iter": 0}])
def test_the_schedule_is_checked(kwargs):
    with pytest.raises(ValueError, match="LoggingTensorHook"):
        LoggingTensorHook({"a": "a"}, **kwargs)


def test_a_second_train_call_of_the_same_estimator_with_a_new_hook_continues_the_same_model(tmp_path):
    records, formatter = _recorder()
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(2))
    estimator = TPUEstimator(_model_fn(), config=config, use_tpu=False, train_batch_size=16)
    estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=2)
    names = estimator.get_variable_names()
    hook = LoggingTensorHook({"step": "seen_step"}, every_n_iter=1, formatter=formatter)
    estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=4, hooks=[hook])  # a loop traced for the hook
    assert [int(r["step"]) for r in records] == [2, 3]
    assert estimator.get_variable_names() == names and estimator.get_variable_value("global_step") == 4
