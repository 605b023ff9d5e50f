"""Which examples each replica gets per step, for every input deployment TPUEstimator 2.15 had.

2.15 on a one-host TPU with R cores (tpu_estimator.py's enqueue functions):
- PER_HOST_V1 (default, per_host_input_for_training=True): input_fn is called once with
  params['batch_size'] = the global batch G; each host batch is cut along axis 0 into R slices of
  G/R rows, slice k to core k. On the CPU (one replica) model_fn gets the whole batch.
- PER_HOST_V2: input_fn is called once with the per-replica batch; its consecutive batches go to
  cores 0..R-1 in turn, every step.
- PER_SHARD_V1 (False): input_fn is called once per core, with the per-replica batch; call k feeds core k.
The input here numbers its examples and its batches (`enumerate` after `batch`), so a replica that got
the right rows from the wrong batch, or the right batch in the wrong order, is caught.
"""

import threading

import keras
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from estimators.run_config import InputPipelineConfig

GLOBAL_BATCH = 16
STEPS = 3


class Recorder:
    """What every replica's model_fn received at every train step, and what input_fn was given."""

    def __init__(self):
        self.rows: dict[tuple[int, int], tuple[list, list]] = {}
        self.input_calls: list[dict] = []
        self._lock = threading.Lock()

    def input_fn(self, params):
        context = params["context"]
        self.input_calls.append({"batch_size": params["batch_size"], "keys": sorted(params),
                                 "deployment": context.current_input_fn_deployment()})
        ids = tf.data.Dataset.range(1000)
        ids = ids.shard(context.num_input_pipelines, context.input_pipeline_id)
        batches = ids.batch(params["batch_size"], drop_remainder=True).enumerate()
        return batches.map(lambda index, batch: ({"ids": batch, "batch": tf.fill(tf.shape(batch), index)},
                                                 tf.cast(batch, tf.float32)))

    def _note(self, replica, step, ids, batch):
        with self._lock:
            self.rows[(int(step), int(replica))] = (ids.numpy().tolist(), batch.numpy().tolist())
        return 0

    def model_fn(self, features, labels, mode, params):
        replica = tf.distribute.get_replica_context().replica_id_in_sync_group
        step = tf.compat.v1.train.get_global_step()
        noted = tf.py_function(self._note, [replica, step, features["ids"], features["batch"]], tf.int32)
        prediction = keras.layers.Dense(1)(tf.cast(features["ids"][:, None], tf.float32))[:, 0]
        with tf.control_dependencies([noted]):
            loss = tf.reduce_mean(tf.square(prediction - labels)) * 0.0
        train_op = CrossShardOptimizer(keras.optimizers.SGD(0.0)).minimize(loss)
        return TPUEstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op)


def _train(tmp_path, strategy, pipeline) -> Recorder:
    recorder = Recorder()
    config = RunConfig(model_dir=str(tmp_path), train_distribute=strategy, save_checkpoints_steps=1000,
                       tpu_config=TPUConfig(iterations_per_loop=STEPS, per_host_input_for_training=pipeline))
    TPUEstimator(recorder.model_fn, config=config, use_tpu=False, train_batch_size=GLOBAL_BATCH).train(
        recorder.input_fn, max_steps=STEPS)
    return recorder


def _expected_per_host_v1(replicas):
    b = GLOBAL_BATCH // replicas
    return {(s, k): (list(range(s * GLOBAL_BATCH + k * b, s * GLOBAL_BATCH + (k + 1) * b)), [s] * b)
            for s in range(STEPS) for k in range(replicas)}


def _expected_per_host_v2(replicas):
    b = GLOBAL_BATCH // replicas
    return {(s, k): (list(range((s * replicas + k) * b, (s * replicas + k + 1) * b)), [s * replicas + k] * b)
            for s in range(STEPS) for k in range(replicas)}


def _expected_per_shard_v1(replicas):
    b = GLOBAL_BATCH // replicas  # call k reads shard k: ids k, k + R, k + 2R, ...
    return {(s, k): ([k + replicas * (s * b + i) for i in range(b)], [s] * b)
            for s in range(STEPS) for k in range(replicas)}


@pytest.mark.parametrize("replicas", [1, 8])
def test_per_host_v1_default_gives_input_fn_the_host_batch_and_each_replica_its_slice(tmp_path, eight_replicas,
                                                                                     replicas):
    recorder = _train(tmp_path, eight_replicas if replicas == 8 else None, True)
    assert recorder.rows == _expected_per_host_v1(replicas)
    [call] = recorder.input_calls
    assert call["batch_size"] == GLOBAL_BATCH
    assert call["deployment"][1:] == (0, 1, replicas)


@pytest.mark.parametrize("replicas", [1, 8])
def test_per_host_v2_gives_each_replica_the_next_per_replica_batch_in_turn(tmp_path, eight_replicas, replicas):
    recorder = _train(tmp_path, eight_replicas if replicas == 8 else None, InputPipelineConfig.PER_HOST_V2)
    assert recorder.rows == _expected_per_host_v2(replicas)
    [call] = recorder.input_calls
    assert call["batch_size"] == GLOBAL_BATCH // replicas
    assert call["deployment"][1:] == (0, 1, replicas)


@pytest.mark.parametrize("replicas", [1, 8])
def test_per_shard_v1_calls_input_fn_once_per_replica_and_call_k_feeds_replica_k(tmp_path, eight_replicas,
                                                                                 replicas):
    recorder = _train(tmp_path, eight_replicas if replicas == 8 else None, False)
    assert recorder.rows == _expected_per_shard_v1(replicas)
    assert [c["batch_size"] for c in recorder.input_calls] == [GLOBAL_BATCH // replicas] * replicas
    assert [c["deployment"][1:] for c in recorder.input_calls] == [(k, replicas, 1) for k in range(replicas)]


def test_input_fn_params_hold_batch_size_and_context_but_not_use_tpu(tmp_path):
    recorder = _train(tmp_path, None, True)
    assert recorder.input_calls[0]["keys"] == ["batch_size", "context"]


def test_per_host_v1_evaluation_sees_every_example_once_with_a_partial_last_batch(tmp_path, eight_replicas):
    def input_fn(params, drop_remainder=False):
        batches = tf.data.Dataset.range(37).batch(params["batch_size"], drop_remainder=drop_remainder)
        return batches.map(lambda ids: ({"ids": ids}, ids))

    def model_fn(features, labels, mode, params):
        ids = features["ids"]
        loss = tf.reduce_mean(tf.cast(ids, tf.float32))

        def metric_fn(ids):
            total = keras.metrics.Sum()
            total.update_state(tf.cast(ids, tf.float32))
            return {"total": total}

        if mode == ModeKeys.TRAIN:
            return TPUEstimatorSpec(mode, loss=loss, train_op=tf.no_op())
        return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [ids]))

    config = RunConfig(model_dir=str(tmp_path), train_distribute=eight_replicas)
    estimator = TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=16, eval_batch_size=16)
    estimator.train(lambda params: input_fn(params, drop_remainder=True), max_steps=1)
    results = estimator.evaluate(input_fn)
    assert results["total"] == sum(range(37))
    # 2.15's CPU figure: the mean of the host batches' losses (7.5, 23.5, 34), not of the 37 rows (18.0)
    assert results["loss"] == pytest.approx((7.5 + 23.5 + 34) / 3)


def _transposed_model_fn(features, labels, mode, params):
    """features arrive batch-last ([3, batch]), as the tensorflow/tpu ResNet's HWCN input; model_fn transposes back."""
    if mode != ModeKeys.PREDICT:
        features = tf.transpose(features)
    logits = keras.layers.Dense(1, name="dense")(features)[:, 0]
    if mode == ModeKeys.PREDICT:
        return TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(tf.square(logits - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())

    def metric_fn(labels, logits):
        return {"mse": tf.compat.v1.metrics.mean_squared_error(labels, logits)}

    return TPUEstimatorSpec(mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits]))


def _transposed_input_fn(params):
    x = tf.reshape(tf.range(24, dtype=tf.float32), [8, 3]) / 24.0
    dataset = tf.data.Dataset.from_tensor_slices((x, tf.reduce_sum(x, 1))).batch(params["batch_size"],
                                                                                  drop_remainder=True)
    return dataset.map(lambda f, y: (tf.transpose(f), y))


def test_per_host_v2_takes_static_batches_whose_first_dimension_is_not_the_batch(tmp_path):
    config = RunConfig(model_dir=str(tmp_path),
                       tpu_config=TPUConfig(per_host_input_for_training=InputPipelineConfig.PER_HOST_V2))
    estimator = TPUEstimator(_transposed_model_fn, config=config, use_tpu=False, train_batch_size=4,
                             eval_batch_size=4)
    estimator.train(_transposed_input_fn, max_steps=2)
    results = estimator.evaluate(_transposed_input_fn, steps=2)
    assert results["global_step"] == 2 and results["mse"] >= 0.0


def test_predict_off_the_tpu_without_predict_batch_size_runs_input_fns_own_batches(tmp_path):
    config = RunConfig(model_dir=str(tmp_path),
                       tpu_config=TPUConfig(per_host_input_for_training=InputPipelineConfig.PER_HOST_V2))
    estimator = TPUEstimator(_transposed_model_fn, config=config, use_tpu=False, train_batch_size=4)
    estimator.train(_transposed_input_fn, max_steps=1)
    x = tf.reshape(tf.range(15, dtype=tf.float32), [5, 3])
    predictions = list(estimator.predict(lambda params: tf.data.Dataset.from_tensor_slices(x).batch(2)))
    assert len(predictions) == 5
