"""Hooks and saving listeners: called between loops, able to stop training; TF1 session hooks take the graph path."""

import keras
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from estimators.training.hooks import Hook, SavingListener, StopAtStepHook
from tests import engine_models as m


def _estimator(model_dir, model_fn=m.linear_model_fn, iterations=2, **config):
    settings = dict(model_dir=str(model_dir), tpu_config=TPUConfig(iterations))
    settings.update(config)
    return TPUEstimator(model_fn, config=RunConfig(**settings), use_tpu=False, train_batch_size=16)


class Recorder(Hook):
    def __init__(self, stop_at=None):
        self.calls, self.stop_at = [], stop_at

    def begin(self, step):
        self.calls.append(("begin", step))

    def after_loop(self, info):
        self.calls.append(("after_loop", info.step, info.steps))
        return self.stop_at is not None and info.step >= self.stop_at

    def end(self, step):
        self.calls.append(("end", step))


def test_hooks_see_every_loop_between_begin_and_end(tmp_path):
    hook = Recorder()
    _estimator(tmp_path, iterations=3).train(m.train_input_fn(*m.dataset(64)), max_steps=7, hooks=[hook])
    assert hook.calls == [("begin", 0), ("after_loop", 3, 3), ("after_loop", 6, 3), ("after_loop", 7, 1),
                          ("end", 7)]


def test_a_hook_returning_true_stops_training_and_a_checkpoint_is_saved_there(tmp_path):
    estimator = _estimator(tmp_path, iterations=2)
    estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=100, hooks=[Recorder(stop_at=4)])
    assert estimator.get_variable_value("global_step") == 4
    assert estimator.latest_checkpoint().endswith("model.ckpt-4")


@pytest.mark.parametrize(("kwargs", "stops_at"), [({"num_steps": 5}, 10), ({"last_step": 6}, 6)])
def test_stop_at_step_hook_counts_from_the_step_training_starts_at(tmp_path, kwargs, stops_at):
    estimator = _estimator(tmp_path, iterations=1)
    estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=5)
    estimator.train(m.train_input_fn(*m.dataset(64)), steps=100, hooks=[StopAtStepHook(**kwargs)])
    assert estimator.get_variable_value("global_step") == max(stops_at, 5)


def test_stop_at_step_hook_needs_exactly_one_bound():
    with pytest.raises(ValueError, match="exactly one of num_steps and last_step"):
        StopAtStepHook()


class SaveRecorder(SavingListener):
    def __init__(self, stop_after=None):
        self.calls, self.stop_after = [], stop_after

    def before_save(self, step):
        self.calls.append(("before", step))

    def after_save(self, step, path):
        self.calls.append(("after", step, path.rsplit("/", 1)[-1]))
        return self.stop_after is not None and step >= self.stop_after


def test_saving_listeners_are_called_around_every_checkpoint(tmp_path):
    listener = SaveRecorder()
    _estimator(tmp_path, save_checkpoints_steps=4).train(m.train_input_fn(*m.dataset(64)), max_steps=9,
                                                         saving_listeners=[listener])
    assert listener.calls == [("before", 4), ("after", 4, "model.ckpt-4"), ("before", 8), ("after", 8, "model.ckpt-8"),
                              ("before", 9), ("after", 9, "model.ckpt-9")]


def test_a_saving_listener_returning_true_stops_training(tmp_path):
    estimator = _estimator(tmp_path, save_checkpoints_steps=4)
    estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=100, saving_listeners=[SaveRecorder(stop_after=8)])
    assert estimator.get_variable_value("global_step") == 8


def test_training_hooks_from_the_spec_are_run(tmp_path):
    hook = Recorder()

    def model_fn(features, labels, mode, params):
        logits = m.linear_model()(features)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        train_op = CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss)
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    _estimator(tmp_path, model_fn).train(m.train_input_fn(*m.dataset(64)), max_steps=4)
    assert hook.calls[0] == ("begin", 0) and hook.calls[-1] == ("end", 4)


def test_a_tf1_session_hook_with_a_keras_3_model_fn_is_one_error_naming_the_choice(tmp_path):
    """A session hook asks for the graph path; a Keras 3 optimizer runs only on the TF2 path: say both."""
    hook = tf.compat.v1.train.StopAtStepHook(last_step=3)
    with pytest.raises(ValueError, match=r"graph path .*because tf.compat.v1 session hooks were given "
                                         r"\(StopAtStepHook\).*Keras optimizer.*StopAtStepHook, LoggingTensorHook"):
        _estimator(tmp_path).train(m.train_input_fn(*m.dataset(64)), max_steps=3, hooks=[hook])
    assert not list(tmp_path.glob("model.ckpt-*"))


def test_evaluate_takes_no_hooks_and_says_so(tmp_path):
    estimator = _estimator(tmp_path).train(m.train_input_fn(*m.dataset(64)), max_steps=1)
    with pytest.raises(ValueError, match=r"evaluate\(\) takes no hooks"):
        estimator.evaluate(m.eval_input_fn(*m.dataset(16)), hooks=[Recorder()])
