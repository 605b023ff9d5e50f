"""TF1 program idioms the compat programs need: tensors from input_fn, lookup tables in exports, get_updates_for.

Each is a behaviour of tf.estimator 2.15 that public programs rely on (tests/compat/programs):
- input_fn returning a one-shot iterator's get_next() tensors: evaluated once per step until the
  iterator ends (2.15 ran them with session.run), so a train() reads every batch once and an
  evaluate() sees every row once;
- a lookup table made in model_fn (feature columns, label vocabularies) goes into the export;
- `model.get_updates_for(inputs)` grouped into train_op: the BatchNorm statistics move as in 2.15.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from engine_models import dataset

import estimators
from estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig

ROWS, BATCH = 24, 8


def iterator_input_fn(x, y, epochs=1):
    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat(epochs).batch(BATCH)
        return tf.compat.v1.data.make_one_shot_iterator(ds).get_next()

    return input_fn


def counting_model_fn(features, labels, mode):
    """Counts the rows it trained on in a non-trainable variable; eval reports mean(x[:, 0]) over rows."""
    rows = tf.compat.v1.get_variable("rows", [], tf.float32, tf.zeros_initializer(), trainable=False)
    weight = tf.compat.v1.get_variable("w", [], tf.float32, tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(features["x"][:, 0] - weight))
    if mode == ModeKeys.TRAIN:
        counted = rows.assign_add(tf.cast(tf.shape(labels)[0], tf.float32))
        train_op = tf.group(counted, tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss))
        return EstimatorSpec(mode, loss=loss, train_op=train_op)
    return EstimatorSpec(mode, loss=loss, eval_metric_ops={
        "mean_x0": tf.compat.v1.metrics.mean(features["x"][:, 0]), "rows": (rows, tf.no_op())})


def test_iterator_tensors_from_input_fn_train_every_batch_once(tmp_path):
    x, y = dataset(ROWS)
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    estimator.train(iterator_input_fn(x, y, epochs=2))
    assert estimator.get_variable_value("global_step") == 2 * ROWS // BATCH
    assert estimator.get_variable_value("rows") == 2 * ROWS


def test_iterator_tensors_from_input_fn_evaluate_every_row_once(tmp_path):
    x, y = dataset(ROWS)
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    estimator.train(iterator_input_fn(x, y), max_steps=1)
    result = estimator.evaluate(iterator_input_fn(x, y))
    np.testing.assert_allclose(result["mean_x0"], x[:, 0].mean(), rtol=1e-6)


def test_constant_tensors_from_input_fn_repeat_every_step(tmp_path):
    x, y = dataset(BATCH)
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: ({"x": tf.constant(x)}, tf.constant(y)), steps=3)
    assert estimator.get_variable_value("rows") == 3 * BATCH


def test_input_fn_returning_something_else_is_refused_by_name(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="input_fn must return a tf.data.Dataset, or `features`"):
        estimator.train(lambda: "features", steps=1)


def test_input_fn_returning_three_items_is_refused_with_2_15s_len_2_rule(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"input_fn should return \(features, labels\) as a len 2 tuple"):
        estimator.train(lambda: [1, 2, 3], steps=1)


WORDS = ["zero", "one", "two"]


def table_model_fn(features, labels, mode):
    """Predicts a word per row through a lookup table made in model_fn (as label vocabularies were)."""
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant([0, 1, 2], tf.int64), tf.constant(WORDS)), "?")
    logits = keras.layers.Dense(3)(features["x"])
    classes = tf.argmax(logits, axis=1)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"class_id": classes, "word": table.lookup(classes)})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    return EstimatorSpec(mode, loss=loss, train_op=tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss))


def test_lookup_table_made_in_model_fn_is_exported_and_served(tmp_path):
    x, y = dataset(ROWS)
    estimator = Estimator(table_model_fn, model_dir=str(tmp_path / "model"))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(BATCH), max_steps=2)
    receiver = estimators.export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 4], tf.float32)})
    path = estimator.export_saved_model(str(tmp_path / "export"), receiver)
    served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant(x[:4]))
    expected = [WORDS[i].encode() for i in served["class_id"].numpy()]
    assert list(served["word"].numpy()) == expected


def batch_norm_model_fn(features, labels, mode):
    """The Colab TPU notebooks' pattern: BN update ops from get_updates_for grouped into train_op."""
    model = keras.Sequential([keras.layers.BatchNormalization(momentum=0.5), keras.layers.Dense(3)])
    logits = model(features["x"], training=mode == ModeKeys.TRAIN)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    update_ops = model.get_updates_for(None) + model.get_updates_for(features["x"])
    minimize = tf.compat.v1.train.GradientDescentOptimizer(0.0).minimize(loss)
    return EstimatorSpec(mode, loss=loss, train_op=tf.group(minimize, *update_ops))


def test_get_updates_for_in_train_op_moves_batch_norm_statistics_once_per_step(tmp_path):
    x, y = dataset(BATCH)
    x = x + 10.0
    estimator = Estimator(batch_norm_model_fn, model_dir=str(tmp_path), config=RunConfig(tf_random_seed=0))
    estimator.train(lambda: tf.data.Dataset.from_tensors(({"x": x}, y)), steps=1)
    names = [n for n in estimator.get_variable_names() if n.endswith("moving_mean")]
    assert len(names) == 1
    # One update with momentum 0.5 from 0: half the batch mean (applied once, not twice).
    np.testing.assert_allclose(estimator.get_variable_value(names[0]), 0.5 * x.mean(axis=0), rtol=1e-5)
