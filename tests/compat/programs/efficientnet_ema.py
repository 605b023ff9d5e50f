"""EfficientNet-style TPUEstimator with weight EMA, evaluated from the averages: ported to estimators (imports only).

Modelled on tensorflow/tpu, models/official/efficientnet/main.py and utils.py at commit
6da032f02921a26284d7d95a4f122d41ab927c21 (with efficientnet_model.py's MBConv block and
imagenet_input.py's input_fn). This is a re-creation written for this test, not a copy: the structure
and every TF1/TPUEstimator API the original uses are reproduced, scaled down (a stem, two MBConv blocks
with squeeze-and-excitation and a head, 8-32 channels, instead of EfficientNet-B0's 16 blocks; 28x28
Fashion-MNIST images tiled to RGB instead of 224x224 ImageNet; batch 64, 240 steps; BatchNorm momentum
0.9 instead of 0.99 so the moving statistics settle within the run), on a Fashion-MNIST slice written
as TFRecords.

APIs exercised: `tf.keras.backend.set_learning_phase` in model_fn; `tf.layers.conv2d` /
`tf.layers.BatchNormalization` (its updates in `tf.GraphKeys.UPDATE_OPS`) / `tf.layers.dense`, and the
original's `DepthwiseConv2D(tf.keras.layers.DepthwiseConv2D, tf.layers.Layer)` hybrid; swish;
`tf.losses.softmax_cross_entropy(onehot_labels, label_smoothing)` + L2 weight decay over
`tf.trainable_variables()` without the BatchNorm ones; `tf.train.exponential_decay` with linear warm-up
on `tf.train.get_global_step()`; `tf.train.RMSPropOptimizer(decay, momentum, epsilon)`;
`minimize(loss, global_step)` under `tf.control_dependencies(UPDATE_OPS)`; then
`tf.train.ExponentialMovingAverage(decay, num_updates=global_step).apply(ema_vars)` under
`tf.control_dependencies([train_op])` as the train op, over `tf.trainable_variables()`, the
`moving_vars` collection and every BatchNorm moving mean/variance (utils.get_ema_vars); for
evaluation `ema.variables_to_restore(ema_vars)` in a TPUEstimatorSpec `scaffold_fn` returning
`tf.train.Scaffold(saver=tf.train.Saver(restore_vars_dict))`, so the averages are what is evaluated;
`eval_metrics=(metric_fn, [labels, logits])` with top-1 (`tf.metrics.accuracy`) and top-5
(`tf.nn.in_top_k` + `tf.metrics.mean`); a PREDICT `tf_estimator.EstimatorSpec` (not a TPU one) with
`export_outputs={'classify': PredictOutput}`; the tpu `RunConfig(save_checkpoints_steps,
log_step_count_steps, session_config=ConfigProto(graph_options=GraphOptions(rewrite_options=
RewriterConfig(disable_meta_optimizer=True))), tpu_config=TPUConfig(iterations_per_loop, tpu_job_name,
per_host_input_for_training=PER_HOST_V2))`; `params` with steps_per_epoch and use_bfloat16; the eval
job's `tf.train.checkpoints_iterator(model_dir, timeout)` loop with `evaluate(steps, checkpoint_path,
name)`, stopping at the final step.

Deliberate differences from the original: the train job (--mode=train) and the eval job (--mode=eval)
the original runs as two processes run one after the other in one process (the original's
train_and_eval mode is left out); --skip_host_call defaults to true (resnet_tpu covers host_call) and
--transpose_input to false; the model is built by functions rather than efficientnet_builder's Keras
Model; no export; predict on 10 examples; a `--seed` goes to RunConfig.tf_random_seed. The report's
`checks.ema_gap` is the mean absolute difference between the trained weights and their averages in
the final checkpoint (the averages lag: about 0.02 on TF 2.15). On TF 2.15 the averages evaluate
better than the trained weights do (top-1 0.69 vs 0.58 for seed 0 with --moving_average_decay=0), so
an evaluation that ignored the scaffold's Saver would show.
"""

import os

from absl import app, flags, logging

import compat_support
import numpy as np
import tensorflow.compat.v1 as tf
import estimators
from tensorflow.core.protobuf import rewriter_config_pb2

flags.DEFINE_string("data_dir", None, "Folder with train/validation/test TFRecords (made when missing).")
flags.DEFINE_string("model_dir", None, "Estimator model_dir.")
flags.DEFINE_string("mode", "train_then_eval", "train, eval, or train_then_eval (both jobs, one process).")
flags.DEFINE_integer("input_image_size", 28, "Input image size.")
flags.DEFINE_integer("train_steps", 240, "Total training steps.")
flags.DEFINE_integer("train_batch_size", 64, "Training batch size.")
flags.DEFINE_integer("eval_batch_size", 100, "Evaluation batch size.")
flags.DEFINE_integer("num_train_images", 3000, "Training images.")
flags.DEFINE_integer("num_eval_images", 2000, "Evaluation images.")
flags.DEFINE_integer("iterations_per_loop", 60, "Steps per TPU loop.")
flags.DEFINE_integer("log_step_count_steps", 64, "Steps between global_step/sec logs.")
flags.DEFINE_integer("num_label_classes", 10, "Number of classes.")
flags.DEFINE_float("base_learning_rate", 0.016, "Learning rate for a batch of 256.")
flags.DEFINE_float("weight_decay", 1e-5, "L2 weight decay.")
flags.DEFINE_float("label_smoothing", 0.1, "Label smoothing.")
flags.DEFINE_float("moving_average_decay", 0.9999, "EMA decay; 0 turns the averages off.")
flags.DEFINE_float("lr_decay_epoch", 2.4, "Epochs between learning rate decays.")
flags.DEFINE_float("lr_warmup_epochs", 1.0, "Learning rate warm-up epochs.")
flags.DEFINE_float("lr_decay_factor", 0.97, "Learning rate decay factor.")
flags.DEFINE_float("batch_norm_momentum", 0.9, "BatchNorm momentum.")
flags.DEFINE_float("batch_norm_epsilon", 1e-3, "BatchNorm epsilon.")
flags.DEFINE_float("dropout_rate", 0.2, "Dropout before the classifier.")
flags.DEFINE_bool("use_tpu", False, "Run on a TPU.")
flags.DEFINE_bool("use_bfloat16", False, "bfloat16 activations on the TPU.")
flags.DEFINE_bool("skip_host_call", True, "Skip the training host_call.")
flags.DEFINE_bool("transpose_input", False, "HWCN input on the TPU.")
flags.DEFINE_string("tpu_job_name", None, "TPU worker job name.")
flags.DEFINE_string("eval_name", None, "Name of the evaluation.")
flags.DEFINE_integer("eval_timeout", 60, "Seconds to wait for a new checkpoint.")
flags.DEFINE_integer("seed", 0, "RunConfig.tf_random_seed.")

FLAGS = flags.FLAGS

MEAN_RGB = [0.5 * 255, 0.5 * 255, 0.5 * 255]
STDDEV_RGB = [0.25 * 255, 0.25 * 255, 0.25 * 255]


# -- utils ----------------------------------------------------------------------------------------------------------
def build_learning_rate(initial_lr, global_step, steps_per_epoch, decay_factor, decay_epochs, warmup_epochs):
    decay_steps = steps_per_epoch * decay_epochs
    lr = tf.train.exponential_decay(initial_lr, global_step, decay_steps, decay_factor, staircase=True)
    if warmup_epochs:
        logging.info("Learning rate warmup_epochs: %d", warmup_epochs)
        warmup_steps = int(warmup_epochs * steps_per_epoch)
        warmup_lr = initial_lr * tf.cast(global_step, tf.float32) / tf.cast(warmup_steps, tf.float32)
        lr = tf.cond(global_step < warmup_steps, lambda: warmup_lr, lambda: lr)
    return lr


def build_optimizer(learning_rate, optimizer_name="rmsprop", decay=0.9, epsilon=0.001, momentum=0.9):
    if optimizer_name == "sgd":
        return tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
    if optimizer_name == "momentum":
        return tf.train.MomentumOptimizer(learning_rate=learning_rate, momentum=momentum)
    if optimizer_name == "rmsprop":
        return tf.train.RMSPropOptimizer(learning_rate, decay=decay, momentum=momentum, epsilon=epsilon)
    raise ValueError(f"Unknown optimizer: {optimizer_name}")


def get_ema_vars():
    """All exponential moving average (ema) variables: trainables and BatchNorm moving statistics."""
    ema_vars = tf.trainable_variables() + tf.get_collection("moving_vars")
    for v in tf.global_variables():
        if "moving_mean" in v.name or "moving_variance" in v.name:
            ema_vars.append(v)
    return list(set(ema_vars))


class DepthwiseConv2D(tf.keras.layers.DepthwiseConv2D, tf.layers.Layer):
    """Wrap keras DepthwiseConv2D to tf.layers."""

    pass


# -- efficientnet_model ---------------------------------------------------------------------------------------------
def swish(x):
    return x * tf.sigmoid(x)


def batch_norm(x, training):
    layer = tf.layers.BatchNormalization(axis=-1, momentum=FLAGS.batch_norm_momentum,
                                         epsilon=FLAGS.batch_norm_epsilon)
    return layer(x, training=training)


def conv(x, filters, kernel_size, strides, name):
    return tf.layers.conv2d(x, filters, kernel_size, strides=strides, padding="same", use_bias=False,
                            kernel_initializer=tf.variance_scaling_initializer(2.0, "fan_out"), name=name)


def mb_conv_block(x, training, expand_ratio, output_filters, se_ratio, name):
    """Inverted bottleneck: expand 1x1, depthwise 3x3, squeeze-and-excitation, project 1x1, residual."""
    with tf.variable_scope(name):
        inputs = x
        filters = int(x.shape[-1]) * expand_ratio
        x = swish(batch_norm(conv(x, filters, 1, 1, "expand_conv"), training))
        depthwise = DepthwiseConv2D([3, 3], strides=[1, 1], padding="same", use_bias=False,
                                    depthwise_initializer=tf.variance_scaling_initializer(2.0, "fan_out"),
                                    name="depthwise_conv2d")
        x = swish(batch_norm(depthwise(x), training))
        with tf.variable_scope("se"):
            num_reduced = max(1, int(int(inputs.shape[-1]) * se_ratio))
            se = tf.reduce_mean(x, [1, 2], keepdims=True)
            se = tf.layers.conv2d(se, num_reduced, 1, padding="same", name="se_reduce")
            se = tf.layers.conv2d(swish(se), filters, 1, padding="same", name="se_expand")
            x = tf.sigmoid(se) * x
        x = batch_norm(conv(x, output_filters, 1, 1, "project_conv"), training)
        if int(inputs.shape[-1]) == output_filters:
            x = tf.add(x, inputs)
        return x


def build_model(images, training, num_classes):
    with tf.variable_scope("efficientnet-tiny"):
        with tf.variable_scope("stem"):
            x = swish(batch_norm(conv(images, 8, 3, 2, "conv2d"), training))
        with tf.variable_scope("blocks"):
            x = mb_conv_block(x, training, expand_ratio=2, output_filters=8, se_ratio=0.25, name="block_0")
            x = mb_conv_block(x, training, expand_ratio=2, output_filters=16, se_ratio=0.25, name="block_1")
        with tf.variable_scope("head"):
            x = swish(batch_norm(conv(x, 32, 1, 1, "conv2d"), training))
            x = tf.reduce_mean(x, [1, 2])
            if training and FLAGS.dropout_rate > 0:
                x = tf.nn.dropout(x, rate=FLAGS.dropout_rate)
            logits = tf.layers.dense(x, num_classes, kernel_initializer=tf.random_uniform_initializer(
                -1.0 / np.sqrt(num_classes), 1.0 / np.sqrt(num_classes)), name="dense")
    return logits


# -- main -----------------------------------------------------------------------------------------------------------
def model_fn(features, labels, mode, params):
    """The model_fn to be used with TPUEstimator."""
    if isinstance(features, dict):
        features = features["feature"]
    stats_shape = [1, 1, 3]
    input_image_size = FLAGS.input_image_size
    if FLAGS.transpose_input and mode != estimators.ModeKeys.PREDICT:
        features = tf.reshape(features, [input_image_size, input_image_size, 3, -1])
        features = tf.transpose(features, [3, 0, 1, 2])  # HWCN to NHWC

    is_training = mode == estimators.ModeKeys.TRAIN
    has_moving_average_decay = FLAGS.moving_average_decay > 0
    # This is essential, if using a keras-derived model.
    tf.keras.backend.set_learning_phase(is_training)

    def normalize_features(features, mean_rgb, stddev_rgb):
        features -= tf.constant(mean_rgb, shape=stats_shape, dtype=features.dtype)
        features /= tf.constant(stddev_rgb, shape=stats_shape, dtype=features.dtype)
        return features

    def build():
        normalized_features = normalize_features(features, MEAN_RGB, STDDEV_RGB)
        return build_model(normalized_features, is_training, FLAGS.num_label_classes)

    if params["use_bfloat16"]:
        with tf.tpu.bfloat16_scope():
            logits = tf.cast(build(), tf.float32)
    else:
        logits = build()

    if mode == estimators.ModeKeys.PREDICT:
        predictions = {
            "classes": tf.argmax(logits, axis=1),
            "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
        }
        return estimators.EstimatorSpec(
            mode=mode, predictions=predictions,
            export_outputs={"classify": estimators.export.PredictOutput(predictions)})

    batch_size = params["batch_size"]  # noqa: F841 - the original reads it to show where the batch size is
    cross_entropy = tf.losses.softmax_cross_entropy(
        logits=logits, onehot_labels=labels, label_smoothing=FLAGS.label_smoothing)
    loss = cross_entropy + FLAGS.weight_decay * tf.add_n(
        [tf.nn.l2_loss(v) for v in tf.trainable_variables() if "batch_normalization" not in v.name])

    global_step = tf.train.get_global_step()
    if has_moving_average_decay:
        ema = tf.train.ExponentialMovingAverage(decay=FLAGS.moving_average_decay, num_updates=global_step)
        ema_vars = get_ema_vars()

    host_call = None
    restore_vars_dict = None
    if is_training:
        scaled_lr = FLAGS.base_learning_rate * (FLAGS.train_batch_size / 256.0)
        learning_rate = build_learning_rate(scaled_lr, global_step, params["steps_per_epoch"],
                                            decay_factor=FLAGS.lr_decay_factor, decay_epochs=FLAGS.lr_decay_epoch,
                                            warmup_epochs=FLAGS.lr_warmup_epochs)
        optimizer = build_optimizer(learning_rate)
        if FLAGS.use_tpu:
            optimizer = estimators.CrossShardOptimizer(optimizer)

        # Batch normalization requires UPDATE_OPS to be added as a dependency to the train operation.
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = optimizer.minimize(loss, global_step)

        if has_moving_average_decay:
            with tf.control_dependencies([train_op]):
                train_op = ema.apply(ema_vars)
        if not FLAGS.skip_host_call:
            raise ValueError("This re-creation has no host_call (see resnet_tpu).")
    else:
        train_op = None
        if has_moving_average_decay:
            # Load moving average variables for eval.
            restore_vars_dict = ema.variables_to_restore(ema_vars)

    eval_metrics = None
    if mode == estimators.ModeKeys.EVAL:

        def metric_fn(labels, logits):
            labels = tf.argmax(labels, axis=1)
            predictions = tf.argmax(logits, axis=1)
            top_1_accuracy = tf.metrics.accuracy(labels, predictions)
            in_top_5 = tf.cast(tf.nn.in_top_k(logits, labels, 5), tf.float32)
            top_5_accuracy = tf.metrics.mean(in_top_5)
            return {"top_1_accuracy": top_1_accuracy, "top_5_accuracy": top_5_accuracy}

        eval_metrics = (metric_fn, [labels, logits])

    num_params = np.sum([np.prod(v.shape) for v in tf.trainable_variables()])
    logging.info("number of trainable parameters: %d", num_params)

    def _scaffold_fn():
        saver = tf.train.Saver(restore_vars_dict)
        return tf.train.Scaffold(saver=saver)

    if has_moving_average_decay and not is_training:
        # Only apply scaffold for eval jobs.
        scaffold_fn = _scaffold_fn
    else:
        scaffold_fn = None

    return estimators.TPUEstimatorSpec(
        mode=mode, loss=loss, train_op=train_op, host_call=host_call, eval_metrics=eval_metrics,
        scaffold_fn=scaffold_fn)


class ImageNetInput:
    """imagenet_input.ImageNetInput's shape: an object whose input_fn(params) reads TFRecords."""

    def __init__(self, is_training, data_dir, num_label_classes, image_size, cache=False):
        self.is_training = is_training
        self.data_dir = data_dir
        self.num_label_classes = num_label_classes
        self.image_size = image_size
        self.cache = cache

    def dataset_parser(self, value):
        keys_to_features = {
            "image_raw": tf.FixedLenFeature((), tf.string, ""),
            "label": tf.FixedLenFeature([], tf.int64, -1),
        }
        parsed = tf.parse_single_example(value, keys_to_features)
        image = tf.reshape(tf.decode_raw(parsed["image_raw"], tf.uint8), [28, 28, 1])
        image = tf.image.grayscale_to_rgb(tf.cast(image, tf.float32))
        if self.is_training:
            image = tf.image.random_flip_left_right(image)
        image = tf.image.resize(image, [self.image_size, self.image_size]) if self.image_size != 28 else image
        label = tf.one_hot(tf.cast(tf.reshape(parsed["label"], shape=[]), tf.int32), self.num_label_classes)
        return image, label

    def input_fn(self, params):
        batch_size = params["batch_size"]
        name = "train.tfrecords" if self.is_training else "validation.tfrecords"
        dataset = tf.data.TFRecordDataset(os.path.join(self.data_dir, name))
        if self.cache:
            dataset = dataset.cache()
        if self.is_training:
            dataset = dataset.repeat().shuffle(1024)
        dataset = dataset.map(self.dataset_parser, num_parallel_calls=2)
        dataset = dataset.batch(batch_size, drop_remainder=True)
        return dataset.prefetch(tf.data.experimental.AUTOTUNE)


def predict_input_fn(params):
    test = ImageNetInput(False, FLAGS.data_dir, FLAGS.num_label_classes, FLAGS.input_image_size)
    dataset = tf.data.TFRecordDataset(os.path.join(FLAGS.data_dir, "test.tfrecords")).map(test.dataset_parser)
    return dataset.map(lambda image, label: image).batch(params["batch_size"])


def make_data(data_dir):
    if tf.io.gfile.exists(os.path.join(data_dir, "test.tfrecords")):
        return
    tf.io.gfile.makedirs(data_dir)
    for name, split, start, count in (("train", "train", 0, FLAGS.num_train_images),
                                      ("validation", "test", 0, FLAGS.num_eval_images), ("test", "test", 2000, 10)):
        images, labels = compat_support.fashion_mnist(split, start, count)
        compat_support.write_tfrecords(os.path.join(data_dir, f"{name}.tfrecords"), images, labels)


def main(unused_argv):
    FLAGS.data_dir = FLAGS.data_dir or os.path.join(FLAGS.model_dir, "data")
    make_data(FLAGS.data_dir)
    input_image_size = FLAGS.input_image_size
    tpu_cluster_resolver = None
    if FLAGS.use_tpu:
        tpu_cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver(None)

    save_checkpoints_steps = max(100, FLAGS.iterations_per_loop)
    config = estimators.tpu.RunConfig(
        cluster=tpu_cluster_resolver,
        model_dir=FLAGS.model_dir,
        tf_random_seed=FLAGS.seed,
        save_checkpoints_steps=save_checkpoints_steps,
        log_step_count_steps=FLAGS.log_step_count_steps,
        session_config=tf.ConfigProto(
            graph_options=tf.GraphOptions(
                rewrite_options=rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True))),
        tpu_config=estimators.TPUConfig(
            iterations_per_loop=FLAGS.iterations_per_loop,
            tpu_job_name=FLAGS.tpu_job_name,
            per_host_input_for_training=estimators.InputPipelineConfig.PER_HOST_V2))
    params = dict(steps_per_epoch=FLAGS.num_train_images / FLAGS.train_batch_size,
                  use_bfloat16=FLAGS.use_bfloat16)
    est = estimators.TPUEstimator(
        use_tpu=FLAGS.use_tpu,
        model_fn=model_fn,
        config=config,
        train_batch_size=FLAGS.train_batch_size,
        eval_batch_size=FLAGS.eval_batch_size,
        predict_batch_size=FLAGS.eval_batch_size,
        params=params)

    imagenet_train = ImageNetInput(True, FLAGS.data_dir, FLAGS.num_label_classes, input_image_size, cache=True)
    imagenet_eval = ImageNetInput(False, FLAGS.data_dir, FLAGS.num_label_classes, input_image_size)

    if FLAGS.mode in ("train", "train_then_eval"):
        logging.info("Training for %d steps (%.2f epochs in total).", FLAGS.train_steps,
                     FLAGS.train_steps / params["steps_per_epoch"])
        est.train(input_fn=imagenet_train.input_fn, max_steps=FLAGS.train_steps, hooks=[])

    eval_results = None
    if FLAGS.mode in ("eval", "train_then_eval"):
        eval_steps = FLAGS.num_eval_images // FLAGS.eval_batch_size
        # Run evaluation when there's a new checkpoint
        for ckpt in tf.train.checkpoints_iterator(FLAGS.model_dir, timeout=FLAGS.eval_timeout):
            logging.info("Starting to evaluate.")
            eval_results = est.evaluate(input_fn=imagenet_eval.input_fn, steps=eval_steps, checkpoint_path=ckpt,
                                        name=FLAGS.eval_name)
            logging.info("Eval results: %s.", eval_results)
            current_step = int(os.path.basename(ckpt).split("-")[1])
            if current_step >= FLAGS.train_steps:
                logging.info("Evaluation finished after training step %d", current_step)
                break

    predictions = list(est.predict(input_fn=predict_input_fn))
    names = est.get_variable_names()
    averaged = [name for name in names if name + "/ExponentialMovingAverage" in names]
    gaps = [np.mean(np.abs(est.get_variable_value(name) - est.get_variable_value(name + "/ExponentialMovingAverage")))
            for name in averaged if "moving_" not in name]
    ema_gap = float(np.mean(gaps)) if gaps else None
    _, test_labels = compat_support.fashion_mnist("test", 2000, 10)
    compat_support.emit({
        "program": "efficientnet_ema",
        "eval": eval_results,
        "loss_curve": compat_support.loss_curve(FLAGS.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(FLAGS.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, test_labels),
        "variables": compat_support.variables(est),
        "moving_statistics": compat_support.moving_statistics(est),
        "checks": {"ema_gap": ema_gap},
    })


if __name__ == "__main__":
    logging.set_verbosity(logging.INFO)
    app.run(main)
