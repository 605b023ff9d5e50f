"""A CIFAR CNN of Keras layers over `Input(tensor=features)`: ported to estimators (imports only).

Modelled on tensorflow/tpu, models/experimental/cifar_keras/cifar_keras.py at commit
0c2a78b21a9758616af9b74d71d7cb01b231f902. This is a re-creation written for this test, not a copy:
the structure and every TF1/TPUEstimator/Keras API the original uses are reproduced, scaled down (8/16
conv filters and a 64-unit dense layer instead of 32/64 and 512; batch 32 instead of 128), on 32x32x3
images written as TFRecords in the original's CIFAR format (raw uint8 bytes, channels first): CIFAR-10
cannot be downloaded here, so they are Fashion-MNIST images padded to 32x32 and repeated over three channels.

APIs exercised: the Keras functional layers of TensorFlow's own Keras (`tf.keras.layers`, Keras 2 in
2.15) applied to `tf.keras.layers.Input(tensor=features)`; `tf.nn.sparse_softmax_cross_entropy_with_logits`
reduced by `tf.reduce_mean`; `tf.compat.v1.train.AdamOptimizer()`, wrapped in
`tf.compat.v1.tpu.CrossShardOptimizer` when --use_tpu, `minimize(loss, global_step=get_global_step())`;
`TPUEstimatorSpec(mode, loss, train_op, predictions)` for every mode; `tpu.RunConfig(save_checkpoints_secs,
session_config=ConfigProto(allow_soft_placement=True), tpu_config=TPUConfig(iterations_per_loop,
num_shards))`; TPUEstimator with train_batch_size; an input_fn parsing TFRecords with
`tf.io.parse_single_example` and `tf.io.decode_raw`, `prefetch`, `cache`, `repeat` and
`batch(drop_remainder=True)`; train(max_steps).

Deliberate differences from the original: besides train(), the program evaluates (loss) and predicts ten
test images (eval and predict batch sizes added to the TPUEstimator), so that the numbers can be compared;
the TPUClusterResolver is made only with --use_tpu; a `--seed` goes to RunConfig.tf_random_seed;
device-placement logging is off; checkpoints every 100 steps rather than every hour.
"""

import os

from absl import app, flags, logging

import compat_support
import numpy as np
import estimators
import tensorflow as tf

flags.DEFINE_string("tpu", None, "The Cloud TPU to use for training.")
flags.DEFINE_integer("batch_size", 32, "Global batch size.")
flags.DEFINE_string("train_file", None, "Path to CIFAR-format training TFRecords (made when missing).")
flags.DEFINE_integer("train_steps", 200, "Total number of steps.")
flags.DEFINE_bool("use_tpu", False, "Use TPUs rather than plain CPUs")
flags.DEFINE_string("model_dir", None, "Estimator model_dir")
flags.DEFINE_integer("iterations_per_loop", 50, "Number of iterations per TPU training loop.")
flags.DEFINE_integer("num_shards", 8, "Number of shards (TPU chips).")
flags.DEFINE_integer("seed", 0, "RunConfig.tf_random_seed.")

FLAGS = flags.FLAGS


def model_fn(features, labels, mode, params):
    """A CIFAR model in Keras layers, with loss and optimizer in TensorFlow."""
    del params
    layers = tf.keras.layers

    v = layers.Input(tensor=features)
    v = layers.Conv2D(filters=8, kernel_size=5, activation="relu", padding="same")(v)
    v = layers.MaxPool2D(pool_size=2)(v)
    v = layers.Conv2D(filters=16, kernel_size=5, activation="relu", padding="same")(v)
    v = layers.MaxPool2D(pool_size=2)(v)
    v = layers.Flatten()(v)
    fc1 = layers.Dense(units=64, activation="relu")(v)
    logits = layers.Dense(units=10)(fc1)

    predictions = {
        "classes": tf.argmax(input=logits, axis=1),
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == estimators.ModeKeys.PREDICT:
        return estimators.TPUEstimatorSpec(mode=mode, predictions=predictions)

    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=labels))
    optimizer = tf.compat.v1.train.AdamOptimizer()
    if FLAGS.use_tpu:
        optimizer = estimators.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return estimators.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op,
                                                       predictions=predictions)


def make_input_fn(records_file, repeat, take=None):
    """An input_fn reading CIFAR-format TFRecords, as the original's (batch size from FLAGS)."""

    def input_fn(params):
        del params
        batch_size = FLAGS.batch_size

        def parser(serialized_example):
            features = tf.io.parse_single_example(
                serialized_example,
                features={
                    "image": tf.io.FixedLenFeature([], tf.string),
                    "label": tf.io.FixedLenFeature([], tf.int64),
                })
            image = tf.io.decode_raw(features["image"], tf.uint8)
            image.set_shape([3 * 32 * 32])
            image = tf.cast(image, tf.float32) * (1. / 255) - 0.5
            image = tf.transpose(tf.reshape(image, [3, 32, 32]))
            label = tf.cast(features["label"], tf.int32)
            return image, label

        dataset = tf.data.TFRecordDataset([records_file])
        dataset = dataset.map(parser, num_parallel_calls=batch_size)
        if take:
            dataset = dataset.take(take)
        dataset = dataset.prefetch(4 * batch_size).cache()
        if repeat:
            dataset = dataset.repeat()
        dataset = dataset.batch(batch_size, drop_remainder=take is None)
        return dataset.prefetch(1)

    return input_fn


def write_cifar_records(path, images, labels):
    """28x28 grey images as CIFAR-10 records: padded to 32x32, three channels, channels first, raw bytes."""
    padded = np.pad(images, ((0, 0), (2, 2), (2, 2)))
    chw = np.repeat(padded[:, np.newaxis], 3, axis=1)  # [n, 3, 32, 32]
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(chw, labels, strict=True):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.astype(np.uint8).tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
            }))
            writer.write(example.SerializeToString())


def make_data(data_dir):
    if tf.io.gfile.exists(os.path.join(data_dir, "test.tfrecords")):
        return
    tf.io.gfile.makedirs(data_dir)
    for name, split, start, count in (("train", "train", 0, 4000), ("eval", "test", 0, 1000),
                                      ("test", "test", 1000, 10)):
        images, labels = compat_support.fashion_mnist(split, start, count)
        write_cifar_records(os.path.join(data_dir, f"{name}.tfrecords"), images, labels)


def main(argv):
    del argv
    logging.set_verbosity(logging.INFO)
    data_dir = os.path.join(FLAGS.model_dir, "data")
    make_data(data_dir)
    train_file = FLAGS.train_file or os.path.join(data_dir, "train.tfrecords")

    tpu_cluster_resolver = None
    if FLAGS.use_tpu:
        tpu_cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu)

    run_config = estimators.tpu.RunConfig(
        cluster=tpu_cluster_resolver,
        model_dir=FLAGS.model_dir,
        tf_random_seed=FLAGS.seed,
        save_checkpoints_steps=100,
        session_config=tf.compat.v1.ConfigProto(allow_soft_placement=True, log_device_placement=False),
        tpu_config=estimators.TPUConfig(
            iterations_per_loop=FLAGS.iterations_per_loop, num_shards=FLAGS.num_shards),
    )
    estimator = estimators.TPUEstimator(
        model_fn=model_fn,
        use_tpu=FLAGS.use_tpu,
        config=run_config,
        train_batch_size=FLAGS.batch_size,
        eval_batch_size=FLAGS.batch_size,
        predict_batch_size=FLAGS.batch_size)
    estimator.train(input_fn=make_input_fn(train_file, repeat=True), max_steps=FLAGS.train_steps)
    eval_results = estimator.evaluate(input_fn=make_input_fn(os.path.join(data_dir, "eval.tfrecords"), False),
                                      steps=1000 // FLAGS.batch_size)
    predictions = list(estimator.predict(input_fn=make_input_fn(os.path.join(data_dir, "test.tfrecords"), False,
                                                                take=10)))
    _, test_labels = compat_support.fashion_mnist("test", 1000, 10)
    compat_support.emit({
        "program": "cifar_keras",
        "eval": eval_results,
        "loss_curve": compat_support.loss_curve(FLAGS.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(FLAGS.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, test_labels),
        "variables": compat_support.variables(estimator),
    })


if __name__ == "__main__":
    app.run(main)
