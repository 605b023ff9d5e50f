"""TensorBoard: model_fn's summaries and the engine's loss at tf.estimator's steps; curves continue after a resume."""

import glob
import os

import keras
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from tests import engine_models as m


def model_fn(features, labels, mode, params):
    logits = m.linear_model()(features)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    tf.summary.scalar("mean_logit", tf.reduce_mean(logits))  # TF2 API
    tf.compat.v1.summary.scalar("v1_loss", loss)  # TF1 API
    train_op = CrossShardOptimizer(keras.optimizers.SGD(params.get("lr", 0.1))).minimize(loss)
    return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def _estimator(model_dir, strategy=None, iterations=4, every=3):
    config = RunConfig(model_dir=str(model_dir), train_distribute=strategy, save_summary_steps=every,
                       save_checkpoints_steps=4, tpu_config=TPUConfig(iterations))
    return TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=16)


def _events(model_dir):
    """[(wall_time, step, tag, value)] of every scalar, and [(wall_time, step)] of every START marker."""
    scalars, starts = [], []
    for path in glob.glob(os.path.join(str(model_dir), "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            if event.HasField("session_log") and event.session_log.status == event.session_log.START:
                starts.append((event.wall_time, event.step))
            for value in event.summary.value:
                number = value.simple_value if value.HasField("simple_value") else float(tf.make_ndarray(value.tensor))
                scalars.append((event.wall_time, event.step, value.tag, number))
    return scalars, starts


def _steps(model_dir, tag):
    return sorted(step for _, step, t, _ in _events(model_dir)[0] if t == tag)


@pytest.mark.parametrize("replicas", [1, 8])
def test_model_fn_summaries_and_loss_are_written_on_the_first_step_then_every_save_summary_steps(
        tmp_path, replicas, eight_replicas):
    estimator = _estimator(tmp_path, eight_replicas if replicas == 8 else None)
    estimator.train(m.train_input_fn(*m.dataset(128)), max_steps=10)
    for tag in ("mean_logit", "v1_loss", "loss", "learning_rate"):  # as tf.estimator 2.15: steps 1, 4, 7, 10
        assert _steps(tmp_path, tag) == [1, 4, 7, 10], tag


def test_the_logged_loss_is_the_loss_of_the_step_it_is_logged_at(tmp_path):
    estimator = _estimator(tmp_path, iterations=1, every=1)
    estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=3)
    v1 = {step: value for _, step, tag, value in _events(tmp_path)[0] if tag == "v1_loss"}
    engine = {step: value for _, step, tag, value in _events(tmp_path)[0] if tag == "loss"}
    assert v1 == pytest.approx(engine, rel=1e-6)


def test_a_resumed_run_marks_its_restart_so_tensorboard_drops_the_dead_runs_points(tmp_path):
    _estimator(tmp_path).train(m.train_input_fn(*m.dataset(64)), max_steps=8)
    # A run that died after its last checkpoint (8) had written summaries for steps 9..11.
    with tf.summary.create_file_writer(str(tmp_path)).as_default():
        for step in (9, 10, 11):
            tf.summary.scalar("loss", 123.0, step=step)
    _estimator(tmp_path).train(m.train_input_fn(*m.dataset(64)), max_steps=12)
    scalars, starts = _events(tmp_path)
    assert [step for _, step in starts] == [9]
    # TensorBoard's purge: a START at step s drops the points at steps >= s written before it.
    (start_time, start_step), = starts
    kept = [(step, value) for time, step, tag, value in scalars
            if tag == "loss" and not (time < start_time and step >= start_step)]
    assert 123.0 not in [value for _, value in kept]
    assert sorted(step for step, _ in kept) == [1, 4, 7, 9, 12]  # each train() call: its first step, then every 3
