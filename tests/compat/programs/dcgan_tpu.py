"""DCGAN on TPUEstimator: two optimizers over scoped variables, noise-only PREDICT: ported to estimators (imports only).

Modelled on tensorflow/tpu, models/experimental/dcgan/dcgan_main.py, mnist_model.py and
mnist_input.py at commit d2694eacb1fdd698a7629271d43f99acf5e75b34 (the last revision with its own
TPUEstimator model_fn, before TF-GAN's TPUGANEstimator replaced it), in the TF 2.15 spelling the
repository's later revisions use (`tensorflow.compat.v1`, `tf_estimator.tpu` for `tf.contrib.tpu`,
and `from tensorflow.python.estimator import estimator`, still importable on TF 2.15). This is a
re-creation written for this test, not a copy: the structure and every TF1/TPUEstimator API the
original uses are reproduced, scaled down (generator fc64-fc784-deconv8-deconv1 and discriminator
conv8-conv16-fc64-fc1 instead of 1024/6272/64 and 64/128/1024; 16 noise dimensions instead of 64;
batch 32, 100 steps in two rounds of 50, instead of 1024 and 10,000 in rounds of 1,000, with a learning
rate of 0.002 instead of 0.0002 so the generator moves within them; a 4x5 grid of 20 samples instead of
10x10), on Fashion-MNIST slices written as TFRecords in MNIST's format.

APIs exercised: `tf.variable_scope('Generator'/'Discriminator', reuse=tf.AUTO_REUSE)` around
`tf.layers.dense/conv2d/conv2d_transpose/batch_normalization` with `tf.truncated_normal_initializer`;
`tf.nn.sigmoid_cross_entropy_with_logits`; two `tf.train.AdamOptimizer(learning_rate, beta1=0.5)`
(each wrapped in `tf.tpu.CrossShardOptimizer` under --use_tpu), each minimising over
`tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=...)` under
`tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))`; the global step advanced by
`tf.assign_add(tf.train.get_or_create_global_step(), 1)` and `tf.group`ed with both steps;
`eval_metrics=(_eval_metric_fn, [d_loss, g_loss])` with `tf.metrics.mean`; an input_fn object whose
`__call__(params)` returns `({'real_images', 'random_noise'}, labels)` tensors from a one-shot iterator
and `tf.random_normal`; a PREDICT input_fn returning `({'random_noise': noise}, None)`; two
TPUEstimators over one tpu `RunConfig` (train/eval batch sizes for one, predict_batch_size for the
CPU one); `estimator._load_global_step_from_checkpoint_dir(model_dir)` driving the
train/evaluate/predict rounds; `tf.gfile.MakeDirs/GFile`.

Deliberate differences from the original: the TPUClusterResolver is made only with --use_tpu;
--use_tpu defaults to false and --eval_loss to true; the variables each optimizer trains are
`TRAINABLE_VARIABLES` in its scope (the original passes `GLOBAL_VARIABLES`, BatchNorm moving
statistics included, which have no gradient and which minimize drops); the sample grid is written as
PNG by `tf.io.encode_png` instead of PIL (not installed with the reference TF 2.15). The report keeps
the predictions' structure and summarises their values (`checks`: the mean and spread of the
generated pixels).
"""

import os

from absl import app, flags

import compat_support
import numpy as np
import tensorflow.compat.v1 as tf
import estimators
from estimators import estimator

FLAGS = flags.FLAGS

flags.DEFINE_string("tpu", None, "The Cloud TPU to use for training.")
flags.DEFINE_string("dataset", "mnist", 'One of ["mnist"] (cifar is left out here).')
flags.DEFINE_string("model_dir", "", "Output model directory")
flags.DEFINE_string("mnist_train_data_file", "", "Training .tfrecord data file (made when missing)")
flags.DEFINE_string("mnist_test_data_file", "", "Test .tfrecord data file (made when missing)")
flags.DEFINE_integer("noise_dim", 16, "Number of dimensions for the noise vector")
flags.DEFINE_integer("batch_size", 32, "Batch size for both generator and discriminator")
flags.DEFINE_integer("num_shards", None, "Number of TPU chips")
flags.DEFINE_integer("train_steps", 100, "Number of training steps")
flags.DEFINE_integer("train_steps_per_eval", 50, "Steps per eval and image generation")
flags.DEFINE_integer("iterations_per_loop", 25, "Steps per interior TPU loop.")
flags.DEFINE_float("learning_rate", 0.002, "LR for both D and G")
flags.DEFINE_boolean("eval_loss", True, "Evaluate discriminator and generator loss during eval")
flags.DEFINE_boolean("use_tpu", False, "Use TPU for training")
flags.DEFINE_integer("seed", 0, "RunConfig.tf_random_seed.")

_NUM_VIZ_IMAGES = 20  # For generating a 4x5 grid of generator samples
NUM_TRAIN_IMAGES = 4000
NUM_EVAL_IMAGES = 512


# -- mnist_model ------------------------------------------------------------------------------------------------
def _leaky_relu(x):
    return tf.nn.leaky_relu(x, alpha=0.2)


def _batch_norm(x, is_training, name):
    return tf.layers.batch_normalization(x, momentum=0.9, epsilon=1e-5, training=is_training, name=name)


def _dense(x, channels, name):
    return tf.layers.dense(x, channels, kernel_initializer=tf.truncated_normal_initializer(stddev=0.02), name=name)


def _conv2d(x, filters, kernel_size, stride, name):
    return tf.layers.conv2d(x, filters, [kernel_size, kernel_size], strides=[stride, stride], padding="same",
                            kernel_initializer=tf.truncated_normal_initializer(stddev=0.02), name=name)


def _deconv2d(x, filters, kernel_size, stride, name):
    return tf.layers.conv2d_transpose(x, filters, [kernel_size, kernel_size], strides=[stride, stride],
                                      padding="same",
                                      kernel_initializer=tf.truncated_normal_initializer(stddev=0.02), name=name)


def discriminator(x, is_training=True, scope="Discriminator"):
    # conv8-lrelu + conv16-bn-lrelu + fc64-bn-lrelu + fc1
    with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
        x = _leaky_relu(_conv2d(x, 8, 4, 2, name="d_conv1"))
        x = _leaky_relu(_batch_norm(_conv2d(x, 16, 4, 2, name="d_conv2"), is_training, name="d_bn2"))
        x = tf.reshape(x, [-1, 7 * 7 * 16])
        x = _leaky_relu(_batch_norm(_dense(x, 64, name="d_fc3"), is_training, name="d_bn3"))
        return _dense(x, 1, name="d_fc4")


def generator(x, is_training=True, scope="Generator"):
    # fc64-bn-relu + fc784-bn-relu + deconv8-bn-relu + deconv1-tanh
    with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
        x = tf.nn.relu(_batch_norm(_dense(x, 64, name="g_fc1"), is_training, name="g_bn1"))
        x = tf.nn.relu(_batch_norm(_dense(x, 7 * 7 * 16, name="g_fc2"), is_training, name="g_bn2"))
        x = tf.reshape(x, [-1, 7, 7, 16])
        x = tf.nn.relu(_batch_norm(_deconv2d(x, 8, 4, 2, name="g_dconv3"), is_training, name="g_bn3"))
        return tf.tanh(_deconv2d(x, 1, 4, 2, name="g_dconv4"))


# -- mnist_input ------------------------------------------------------------------------------------------------
def parser(serialized_example):
    """Parses a single Example into image and label tensors."""
    features = tf.parse_single_example(
        serialized_example,
        features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),  # label is unused
        })
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([28 * 28])
    image = tf.reshape(image, [28, 28, 1])
    # Normalize the values of the image from [0, 255] to [-1.0, 1.0]
    image = tf.cast(image, tf.float32) * (2.0 / 255) - 1.0
    label = tf.cast(tf.reshape(features["label"], shape=[]), dtype=tf.int32)
    return image, label


class InputFunction:
    """Wrapper class that is passed as callable to Estimator."""

    def __init__(self, is_training, noise_dim):
        self.is_training = is_training
        self.noise_dim = noise_dim
        self.data_file = FLAGS.mnist_train_data_file if is_training else FLAGS.mnist_test_data_file

    def __call__(self, params):
        batch_size = params["batch_size"]
        dataset = tf.data.TFRecordDataset(self.data_file)
        dataset = dataset.map(parser).cache()
        if self.is_training:
            dataset = dataset.repeat()
        dataset = dataset.shuffle(1024)
        dataset = dataset.prefetch(batch_size)
        dataset = dataset.batch(batch_size, drop_remainder=True)
        dataset = dataset.prefetch(2)
        images, labels = tf.data.make_one_shot_iterator(dataset).get_next()
        random_noise = tf.random_normal([batch_size, self.noise_dim])
        features = {"real_images": images, "random_noise": random_noise}
        return features, labels


def convert_array_to_png(array):
    """The tiled samples as PNG bytes, undoing the [-1, 1] scaling."""
    return tf.io.encode_png(np.uint8((array + 1.0) / 2.0 * 255)).numpy()


# -- dcgan_main ---------------------------------------------------------------------------------------------------
dataset = None
model = None


def model_fn(features, labels, mode, params):
    """Constructs DCGAN from individual generator and discriminator networks."""
    del labels  # Unconditional GAN does not use labels

    if mode == estimators.ModeKeys.PREDICT:
        random_noise = features["random_noise"]
        predictions = {"generated_images": model.generator(random_noise, is_training=False)}
        return estimators.TPUEstimatorSpec(mode=mode, predictions=predictions)

    batch_size = params["batch_size"]  # noqa: F841 - the original reads it to show where the batch size is
    real_images = features["real_images"]
    random_noise = features["random_noise"]

    is_training = mode == estimators.ModeKeys.TRAIN
    generated_images = model.generator(random_noise, is_training=is_training)

    # Get logits from discriminator
    d_on_data_logits = tf.squeeze(model.discriminator(real_images))
    d_on_g_logits = tf.squeeze(model.discriminator(generated_images))

    # Calculate discriminator loss
    d_loss_on_data = tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.ones_like(d_on_data_logits), logits=d_on_data_logits)
    d_loss_on_gen = tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.zeros_like(d_on_g_logits), logits=d_on_g_logits)
    d_loss = d_loss_on_data + d_loss_on_gen

    # Calculate generator loss
    g_loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones_like(d_on_g_logits), logits=d_on_g_logits)

    if mode == estimators.ModeKeys.TRAIN:
        d_loss = tf.reduce_mean(d_loss)
        g_loss = tf.reduce_mean(g_loss)
        d_optimizer = tf.train.AdamOptimizer(learning_rate=FLAGS.learning_rate, beta1=0.5)
        g_optimizer = tf.train.AdamOptimizer(learning_rate=FLAGS.learning_rate, beta1=0.5)
        if FLAGS.use_tpu:
            d_optimizer = estimators.CrossShardOptimizer(d_optimizer)
            g_optimizer = estimators.CrossShardOptimizer(g_optimizer)

        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            d_step = d_optimizer.minimize(
                d_loss, var_list=tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="Discriminator"))
            g_step = g_optimizer.minimize(
                g_loss, var_list=tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="Generator"))

            increment_step = tf.assign_add(tf.train.get_or_create_global_step(), 1)
            joint_op = tf.group([d_step, g_step, increment_step])

            return estimators.TPUEstimatorSpec(mode=mode, loss=g_loss, train_op=joint_op)

    elif mode == estimators.ModeKeys.EVAL:

        def _eval_metric_fn(d_loss, g_loss):
            # When using TPUs, this function is run on a different machine than the rest of the model_fn
            # and should not capture any Tensors defined there.
            return {"discriminator_loss": tf.metrics.mean(d_loss), "generator_loss": tf.metrics.mean(g_loss)}

        return estimators.TPUEstimatorSpec(
            mode=mode, loss=tf.reduce_mean(g_loss), eval_metrics=(_eval_metric_fn, [d_loss, g_loss]))

    # Should never reach here
    raise ValueError("Invalid mode provided to model_fn")


def generate_input_fn(is_training):
    """Creates input_fn depending on whether the code is training or not."""
    return dataset.InputFunction(is_training, FLAGS.noise_dim)


def noise_input_fn(params):
    """Input function for generating samples for PREDICT mode: one batch of fixed noise, then the end."""
    np.random.seed(0)
    noise_dataset = tf.data.Dataset.from_tensors(tf.constant(
        np.random.randn(params["batch_size"], FLAGS.noise_dim), dtype=tf.float32))
    noise = tf.data.make_one_shot_iterator(noise_dataset).get_next()
    return {"random_noise": noise}, None


class _Namespace:
    """The modules mnist_model / mnist_input, as one object each."""

    def __init__(self, **members):
        self.__dict__.update(members)


mnist_model = _Namespace(generator=generator, discriminator=discriminator)
mnist_input = _Namespace(InputFunction=InputFunction, NUM_TRAIN_IMAGES=NUM_TRAIN_IMAGES,
                         NUM_EVAL_IMAGES=NUM_EVAL_IMAGES, convert_array_to_png=convert_array_to_png)


def make_data(data_dir):
    """MNIST's TFRecords, from Fashion-MNIST slices."""
    tf.gfile.MakeDirs(data_dir)
    for split, start, count, path in (("train", 0, NUM_TRAIN_IMAGES, FLAGS.mnist_train_data_file),
                                      ("test", 0, NUM_EVAL_IMAGES, FLAGS.mnist_test_data_file)):
        if not tf.gfile.Exists(path):
            compat_support.write_tfrecords(path, *compat_support.fashion_mnist(split, start, count))


def main(argv):
    del argv
    data_dir = os.path.join(FLAGS.model_dir, "data")
    FLAGS.mnist_train_data_file = FLAGS.mnist_train_data_file or os.path.join(data_dir, "train.tfrecords")
    FLAGS.mnist_test_data_file = FLAGS.mnist_test_data_file or os.path.join(data_dir, "test.tfrecords")
    make_data(data_dir)

    tpu_cluster_resolver = None
    if FLAGS.use_tpu:
        tpu_cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu)

    config = estimators.tpu.RunConfig(
        cluster=tpu_cluster_resolver,
        model_dir=FLAGS.model_dir,
        tf_random_seed=FLAGS.seed,
        tpu_config=estimators.TPUConfig(
            num_shards=FLAGS.num_shards, iterations_per_loop=FLAGS.iterations_per_loop))

    # Set module-level global variable so that model_fn and input_fn can be identical for each
    # different kind of dataset and model
    global dataset, model
    if FLAGS.dataset == "mnist":
        dataset = mnist_input
        model = mnist_model
    else:
        raise ValueError(f"Invalid dataset: {FLAGS.dataset}")

    # TPU-based estimator used for TRAIN and EVAL
    est = estimators.TPUEstimator(
        model_fn=model_fn, use_tpu=FLAGS.use_tpu, config=config,
        train_batch_size=FLAGS.batch_size, eval_batch_size=FLAGS.batch_size)

    # CPU-based estimator used for PREDICT (generating images)
    cpu_est = estimators.TPUEstimator(
        model_fn=model_fn, use_tpu=False, config=config, predict_batch_size=_NUM_VIZ_IMAGES)

    tf.gfile.MakeDirs(os.path.join(FLAGS.model_dir, "generated_images"))

    current_step = estimator._load_global_step_from_checkpoint_dir(FLAGS.model_dir)  # pylint: disable=protected-access
    tf.logging.info("Starting training for %d steps, current step: %d", FLAGS.train_steps, current_step)
    metrics, predictions, images = None, [], []
    while current_step < FLAGS.train_steps:
        next_checkpoint = min(current_step + FLAGS.train_steps_per_eval, FLAGS.train_steps)
        est.train(input_fn=generate_input_fn(True), max_steps=next_checkpoint)
        current_step = next_checkpoint
        tf.logging.info("Finished training step %d", current_step)

        if FLAGS.eval_loss:
            # Evaluate loss on test set
            metrics = est.evaluate(input_fn=generate_input_fn(False),
                                   steps=dataset.NUM_EVAL_IMAGES // FLAGS.batch_size)
            tf.logging.info("Finished evaluating")
            tf.logging.info(metrics)

        # Render some generated images
        predictions = list(cpu_est.predict(input_fn=noise_input_fn))
        images = [p["generated_images"][:, :, :] for p in predictions]
        assert len(images) == _NUM_VIZ_IMAGES
        image_rows = [np.concatenate(images[i:i + 5], axis=0) for i in range(0, _NUM_VIZ_IMAGES, 5)]
        tiled_image = np.concatenate(image_rows, axis=1)

        step_string = str(current_step).zfill(5)
        with tf.gfile.GFile(os.path.join(FLAGS.model_dir, "generated_images", f"gen_{step_string}.png"),
                            "wb") as file_obj:
            file_obj.write(dataset.convert_array_to_png(tiled_image))
        tf.logging.info("Finished generating images")

    stacked = np.stack(images)
    compat_support.emit({
        "program": "dcgan_tpu",
        "eval": metrics,
        "loss_curve": compat_support.loss_curve(FLAGS.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(FLAGS.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, keep_values=False),
        "variables": compat_support.variables(est),
        "moving_statistics": compat_support.moving_statistics(est),
        "checks": {"generated_mean": float(stacked.mean()),
                   "generated_spread": float(stacked.std(axis=0).mean())},
        "counts": {"images_written": len(tf.gfile.ListDirectory(os.path.join(FLAGS.model_dir, "generated_images")))},
    })


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    app.run(main)
