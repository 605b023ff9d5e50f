"""TPUEstimatorSpec.host_call: every replica's tensors concatenated, a host function per step, summaries read back."""

import glob
import os

import keras
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from tests import engine_models as m


def _model_fn(host_call_of):
    """linear_model_fn's training with host_call=host_call_of(features, labels, loss, global_step)."""

    def model_fn(features, labels, mode, params):
        logits = m.linear_model()(features)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        train_op = CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss)
        step = tf.compat.v1.train.get_global_step()
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                host_call=host_call_of(features, labels, loss, step))

    return model_fn


def _train(model_dir, model_fn, steps=4, strategy=None, iterations=2, summary_steps=100, every=1):
    config = RunConfig(model_dir=str(model_dir), train_distribute=strategy, save_summary_steps=summary_steps,
                       tpu_config=TPUConfig(iterations, experimental_host_call_every_n_steps=every))
    estimator = TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=16)
    estimator.train(m.train_input_fn(*m.dataset(64)), max_steps=steps)
    return estimator


def _scalars(logdir, tag):
    """[(step, value)] of `tag` in logdir's event files, in step order."""
    points = []
    for path in glob.glob(os.path.join(str(logdir), "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    number = value.simple_value if value.HasField("simple_value") else tf.make_ndarray(value.tensor)
                    points.append((event.step, float(number)))
    return sorted(points)


def test_a_tpu_style_host_call_writes_its_summaries_every_step_with_its_own_writer(tmp_path):
    logdir = str(tmp_path / "host")

    def host_call_of(features, labels, loss, step):
        def host_fn(global_step, loss):  # the 2.15 idiom: own writer, always record, step from a tensor
            with tf.summary.create_file_writer(logdir).as_default(), tf.summary.record_if(True):
                tf.summary.scalar("host_loss", loss[0], step=global_step[0])
            return tf.compat.v1.summary.all_v2_summary_ops()

        return host_fn, [tf.reshape(step, [1]), tf.reshape(loss, [1])]

    _train(tmp_path, _model_fn(host_call_of), steps=5)
    points = _scalars(logdir, "host_loss")
    assert [step for step, _ in points] == [0, 1, 2, 3, 4]  # the step model_fn saw: once per step, every loop
    assert all(0.0 < value < 5.0 for _, value in points)


def test_replicas_tensors_reach_the_host_function_concatenated_along_dimension_0(tmp_path, eight_replicas):
    def host_call_of(features, labels, loss, step):
        def host_fn(rows, labels):
            tf.summary.scalar("replicas", tf.shape(rows)[0])  # one row per replica
            tf.summary.scalar("batch_rows", tf.reduce_sum(rows))  # 8 replicas x 2 rows
            tf.summary.scalar("labels", tf.shape(labels)[0])  # the global batch

        return host_fn, {"rows": tf.reshape(tf.shape(features)[0], [1]), "labels": labels}

    _train(tmp_path, _model_fn(host_call_of), steps=3, strategy=eight_replicas, summary_steps=1)
    # No writer of its own: the step's default writer (model_dir) at the step's global step.
    assert _scalars(tmp_path, "replicas") == [(1, 8.0), (2, 8.0), (3, 8.0)]
    assert _scalars(tmp_path, "batch_rows") == [(1, 16.0), (2, 16.0), (3, 16.0)]
    assert _scalars(tmp_path, "labels") == [(1, 16.0), (2, 16.0), (3, 16.0)]


def test_a_scalar_host_call_tensor_under_replicas_says_to_reshape_it(tmp_path, eight_replicas):
    def host_call_of(features, labels, loss, step):
        return (lambda loss: None), [loss]

    with pytest.raises(ValueError, match=r"host_call tensors are concatenated.*tf.reshape\(t, \[1\]\)"):
        _train(tmp_path, _model_fn(host_call_of), steps=1, strategy=eight_replicas)


def test_with_one_device_and_use_tpu_false_a_scalar_reaches_the_host_function_as_it_is(tmp_path):
    def host_call_of(features, labels, loss, step):
        def host_fn(loss):
            tf.summary.scalar("rank", tf.rank(loss))
            tf.compat.v1.summary.scalar("v1_loss", loss)  # a tf.compat.v1 summary from the host function

        return host_fn, [loss]

    _train(tmp_path, _model_fn(host_call_of), steps=2, summary_steps=1)
    assert _scalars(tmp_path, "rank") == [(1, 0.0), (2, 0.0)]
    assert [step for step, _ in _scalars(tmp_path, "v1_loss")] == [1, 2]


def test_host_call_every_n_steps_counts_steps_within_each_loop(tmp_path):
    def host_call_of(features, labels, loss, step):
        def host_fn(global_step):
            tf.summary.scalar("called", 1.0, step=global_step[0])

        return host_fn, [tf.reshape(step, [1])]

    _train(tmp_path, _model_fn(host_call_of), steps=8, iterations=4, summary_steps=1, every=2)
    assert [step for step, _ in _scalars(tmp_path, "called")] == [0, 2, 4, 6]


def test_host_call_tensors_must_match_the_function_arguments(tmp_path):
    def host_call_of(features, labels, loss, step):
        return (lambda loss, step: None), [loss]

    with pytest.raises(RuntimeError, match="passes 1 tensors to a function that takes 2 arguments"):
        _train(tmp_path, _model_fn(host_call_of), steps=1)


def test_host_call_must_be_a_function_and_tensors():
    with pytest.raises(ValueError, match=r"host_call must be a tuple \(fn, tensors\)"):
        from estimators.specs import validate_spec
        validate_spec(TPUEstimatorSpec(ModeKeys.PREDICT, predictions=tf.constant([1]), host_call=print),
                      ModeKeys.PREDICT)


def _all_modes_model_fn(logdir):
    def model_fn(features, labels, mode, params):
        logits = m.linear_model()(features)

        def host_fn(rows):
            with tf.summary.create_file_writer(logdir).as_default(), tf.summary.record_if(True):
                tf.summary.scalar(f"{mode}_rows", tf.shape(rows)[0], step=0)

        host_call = (host_fn, [features])
        if mode == ModeKeys.PREDICT:
            return TPUEstimatorSpec(mode, predictions={"logits": logits}, host_call=host_call)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        train_op = CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss) if mode == ModeKeys.TRAIN else None
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)

    return model_fn


def test_predict_calls_the_host_function_every_step_with_real_rows(tmp_path):
    logdir = str(tmp_path / "host")
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(2))
    estimator = TPUEstimator(_all_modes_model_fn(logdir), config=config, use_tpu=False, train_batch_size=16,
                             predict_batch_size=16)
    x, y = m.dataset(40)
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    assert len(list(estimator.predict(m.predict_input_fn(x)))) == 40
    # 16, 16, then 8 real rows padded to 16 (static shapes, as on a TPU); the all-padding step calls nothing.
    assert _scalars(logdir, "infer_rows") == [(0, 16.0)] * 3
    assert _scalars(logdir, "train_rows") == [(0, 16.0)]


def test_a_tpu_estimator_refuses_an_eval_host_call_rather_than_repeat_rows(tmp_path):
    config = RunConfig(model_dir=str(tmp_path), tpu_config=TPUConfig(2))
    estimator = TPUEstimator(_all_modes_model_fn(str(tmp_path / "host")), config=config, use_tpu=False,
                             train_batch_size=16, eval_batch_size=16)
    x, y = m.dataset(40)
    estimator.train(m.train_input_fn(x, y), max_steps=1)
    with pytest.raises(ValueError, match="host_call in EVAL is not run by TPUEstimator here"):
        estimator.evaluate(m.eval_input_fn(x, y))


def test_an_estimator_runs_an_eval_host_call_on_each_batch_as_input_fn_made_it(tmp_path):
    from estimators import Estimator

    logdir = str(tmp_path / "host")
    x, y = m.dataset(40)

    def batched(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(16)

    estimator = Estimator(_all_modes_model_fn(logdir), config=RunConfig(model_dir=str(tmp_path)))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16), max_steps=1)
    estimator.evaluate(batched)
    assert _scalars(logdir, "eval_rows") == [(0, 8.0), (0, 16.0), (0, 16.0)]  # 2.15's use_tpu=False path
