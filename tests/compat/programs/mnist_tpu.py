"""MNIST-style CNN on TPUEstimator with tf.compat.v1 layers: ported to estimators (imports only).

Modelled on tensorflow/tpu, models/official/mnist/mnist_tpu.py at commit
b681f132cd9987cfe8fa6f7383072897831dcd73. This is a re-creation written for this test, not a copy:
the structure and every TF1/TPUEstimator API the original uses are reproduced, scaled down
(8/8 conv filters and a 128-unit dense layer instead of 32/32 and 1024; batch 64 instead of 1024;
decay every 100 steps instead of 100,000, so the global-step-driven decay shows within the run), on a
Fashion-MNIST slice written as TFRecords in the original's format.

APIs exercised: `import tensorflow.compat.v1 as tf` and `from tensorflow.compat.v1 import estimator
as tf_estimator`; absl flags; `tf.layers.Conv2D/MaxPooling2D/Flatten/Dense/Dropout` (layer classes,
called on tensors); `tf.losses.sparse_softmax_cross_entropy`; `tf.train.exponential_decay` on
`tf.train.get_global_step()`; `tf.train.GradientDescentOptimizer`, wrapped in
`tf.tpu.CrossShardOptimizer` when --use_tpu; `optimizer.minimize(loss, tf.train.get_global_step())`;
`tf_estimator.tpu.TPUEstimatorSpec` with `eval_metrics=(metric_fn, [labels, logits])` and
`tf.metrics.accuracy`; `tf_estimator.tpu.RunConfig(session_config=tf.ConfigProto(...),
tpu_config=tf_estimator.tpu.TPUConfig(iterations, num_shards))` (positional); TPUEstimator with
train/eval/predict batch sizes and params={"data_dir"}; input_fns reading `params["batch_size"]` and
`params["data_dir"]`, parsing TFRecords with `tf.io.parse_single_example` and `tf.decode_raw`;
train(max_steps), evaluate(steps), predict on 10 examples.

Deliberate differences from the original: the TPUClusterResolver is made only with --use_tpu (the
original also makes one for "" on CPU, which probes for a TPU), device-placement logging is off, and
a `--seed` goes to RunConfig.tf_random_seed so reference runs can be repeated.
"""

import os

from absl import app, flags, logging

import compat_support
import tensorflow.compat.v1 as tf
import estimators

flags.DEFINE_string("tpu", None, "TPU name or grpc:// address.")
flags.DEFINE_string("data_dir", None, "Folder with {train,validation,test}.tfrecords (made when missing).")
flags.DEFINE_string("model_dir", None, "Estimator model_dir.")
flags.DEFINE_integer("batch_size", 64, "Global batch size for training, evaluation and prediction.")
flags.DEFINE_integer("steps", 300, "Total number of training steps.")
flags.DEFINE_integer("eval_steps", 31, "Evaluation steps (batches); 0 skips evaluation.")
flags.DEFINE_float("learning_rate", 0.05, "Initial learning rate.")
flags.DEFINE_bool("use_tpu", False, "Run on a TPU.")
flags.DEFINE_bool("enable_predict", True, "Predict a few examples at the end.")
flags.DEFINE_integer("iterations", 50, "Steps per TPU training loop.")
flags.DEFINE_integer("num_shards", 8, "Number of TPU cores.")
flags.DEFINE_integer("seed", 0, "RunConfig.tf_random_seed.")

FLAGS = flags.FLAGS


def metric_fn(labels, logits):
    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))
    return {"accuracy": accuracy}


def model_fn(features, labels, mode, params):
    """A two-conv CNN; the spec for `mode`."""
    del params
    image = features / 255.0

    net = tf.layers.Conv2D(filters=8, kernel_size=5, padding="same", activation="relu")(image)
    net = tf.layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), padding="same")(net)
    net = tf.layers.Conv2D(filters=8, kernel_size=5, padding="same", activation="relu")(net)
    net = tf.layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2), padding="same")(net)
    net = tf.layers.Flatten()(net)
    net = tf.layers.Dense(128, activation="relu")(net)
    net = tf.layers.Dropout(0.4)(net, training=(mode == estimators.ModeKeys.TRAIN))
    logits = tf.layers.Dense(10)(net)

    if mode == estimators.ModeKeys.PREDICT:
        predictions = {"class_ids": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
        return estimators.TPUEstimatorSpec(mode, predictions=predictions)

    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)

    if mode == estimators.ModeKeys.TRAIN:
        learning_rate = tf.train.exponential_decay(
            FLAGS.learning_rate, tf.train.get_global_step(), decay_steps=100, decay_rate=0.96)
        optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
        if FLAGS.use_tpu:
            optimizer = estimators.CrossShardOptimizer(optimizer)
        return estimators.TPUEstimatorSpec(
            mode=mode, loss=loss, train_op=optimizer.minimize(loss, tf.train.get_global_step()))

    if mode == estimators.ModeKeys.EVAL:
        return estimators.TPUEstimatorSpec(mode=mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))


def dataset(records_file):
    """(image float32 [28, 28, 1], label int64) pairs from a TFRecords file."""
    keys_to_features = {
        "image_raw": tf.io.FixedLenFeature((), tf.string),
        "label": tf.io.FixedLenFeature((), tf.int64),
    }

    def decode(record):
        example = tf.io.parse_single_example(record, keys_to_features)
        image = tf.decode_raw(example["image_raw"], tf.uint8)
        image = tf.reshape(tf.cast(image, tf.float32), [28, 28, 1])
        return image, example["label"]

    return tf.data.TFRecordDataset(records_file).map(decode)


def train_input_fn(params):
    records_file = os.path.join(params["data_dir"], "train.tfrecords")
    return dataset(records_file).cache().repeat().shuffle(buffer_size=6000).batch(
        params["batch_size"], drop_remainder=True)


def eval_input_fn(params):
    records_file = os.path.join(params["data_dir"], "validation.tfrecords")
    return dataset(records_file).batch(params["batch_size"], drop_remainder=True)


def predict_input_fn(params):
    records_file = os.path.join(params["data_dir"], "test.tfrecords")
    return dataset(records_file).take(10).batch(params["batch_size"])


def make_data(data_dir):
    """The TFRecords the original's convert_to_records step writes, from a Fashion-MNIST slice."""
    if tf.io.gfile.exists(os.path.join(data_dir, "test.tfrecords")):
        return
    tf.io.gfile.makedirs(data_dir)
    for name, split, start, count in (("train", "train", 0, 6000), ("validation", "test", 0, 2000),
                                      ("test", "test", 2000, 10)):
        images, labels = compat_support.fashion_mnist(split, start, count)
        compat_support.write_tfrecords(os.path.join(data_dir, f"{name}.tfrecords"), images, labels)


def main(argv):
    del argv
    logging.set_verbosity(logging.INFO)
    data_dir = FLAGS.data_dir or os.path.join(FLAGS.model_dir, "data")
    make_data(data_dir)

    tpu_cluster_resolver = None
    if FLAGS.use_tpu:
        tpu_cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu)

    run_config = estimators.tpu.RunConfig(
        cluster=tpu_cluster_resolver,
        model_dir=FLAGS.model_dir,
        tf_random_seed=FLAGS.seed,
        session_config=tf.ConfigProto(allow_soft_placement=True, log_device_placement=False),
        tpu_config=estimators.TPUConfig(FLAGS.iterations, FLAGS.num_shards),
    )
    estimator = estimators.TPUEstimator(
        model_fn=model_fn,
        use_tpu=FLAGS.use_tpu,
        train_batch_size=FLAGS.batch_size,
        eval_batch_size=FLAGS.batch_size,
        predict_batch_size=FLAGS.batch_size,
        params={"data_dir": data_dir},
        config=run_config)
    estimator.train(input_fn=train_input_fn, max_steps=FLAGS.steps)
    eval_results = None
    if FLAGS.eval_steps:
        eval_results = estimator.evaluate(input_fn=eval_input_fn, steps=FLAGS.eval_steps)

    predictions = []
    if FLAGS.enable_predict:
        for pred_dict in estimator.predict(input_fn=predict_input_fn):
            class_id = pred_dict["class_ids"]
            logging.info('Prediction is "%s" (%.1f%%).', class_id, 100 * pred_dict["probabilities"][class_id])
            predictions.append(pred_dict)

    _, test_labels = compat_support.fashion_mnist("test", 2000, 10)
    compat_support.emit({
        "program": "mnist_tpu",
        "eval": eval_results,
        "loss_curve": compat_support.loss_curve(FLAGS.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(FLAGS.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, test_labels),
        "variables": compat_support.variables(estimator),
    })


if __name__ == "__main__":
    app.run(main)
