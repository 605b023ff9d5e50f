"""A tiny ResNet in the style of the Cloud TPU reference ResNet on TPUEstimator: ported to estimators (imports only).

Modelled on tensorflow/tpu, models/official/resnet/resnet_main.py at commit
4641d6ede38fc7c8d63b0bf9f2f5a615f5e68cbd with its resnet_model.py and imagenet_input.py
(image_serving_input_fn) at the same revision. This is a re-creation written for this test, not a
copy: the structure and every TF1/TPUEstimator API the original uses are reproduced, scaled down to
a two-stage ResNet (8 and 16 filters, one residual block each) on 28x28 Fashion-MNIST images made
RGB, batch 64, and a learning-rate schedule measured in epochs of a 6,000-image slice.

APIs exercised: `import tensorflow.compat.v1 as tf`, `import tensorflow.compat.v2 as tf2` and
`from tensorflow.compat.v1 import estimator as tf_estimator`; absl flags turned into a params dict;
`tf.layers.conv2d` (variance_scaling_initializer, no bias, explicit `tf.pad` for strided convs),
`tf.layers.batch_normalization(training=, fused=True, momentum=0.9, epsilon=1e-5,
gamma_initializer=zeros for the last BN of a block)`, `tf.layers.max_pooling2d`,
`tf.layers.average_pooling2d`, `tf.layers.dense(kernel_initializer=tf.random_normal_initializer)`, named
`tf.identity`s; BN moving averages through `tf.get_collection(tf.GraphKeys.UPDATE_OPS)` and
`tf.control_dependencies`; the double transpose of the input (HWCN from input_fn, NHWC in model_fn) for
TRAIN and EVAL; mean/stddev normalisation with `tf.constant(shape=[1, 1, 3])`; an optional
`tf.tpu.bfloat16_scope` (off: --precision=float32); `tf.losses.softmax_cross_entropy(onehot_labels,
label_smoothing=)`; weight decay over `tf.trainable_variables()` except batch_normalization;
`tf.train.get_global_step()` -> epoch -> warm-up and piecewise learning rate with `tf.where`;
`tf.train.MomentumOptimizer(use_nesterov=True)`, `tf.tpu.CrossShardOptimizer` when use_tpu; a
`host_call` writing `tf2.summary.scalar`s under `tf2.summary.create_file_writer(max_queue=)` and
`tf2.summary.record_if(True)`, returning `tf.summary.all_v2_summary_ops()`; `metric_fn` with
`tf.metrics.accuracy` and `tf.metrics.mean(tf.nn.in_top_k(...))`; a PREDICT `tf_estimator.EstimatorSpec`
with `export_outputs={'classify': tf_estimator.export.PredictOutput(...)}` returned from a TPUEstimator
model_fn; `tf_estimator.tpu.RunConfig(save_checkpoints_steps, log_step_count_steps,
session_config=tf.ConfigProto(graph_options=...), tpu_config=TPUConfig(iterations_per_loop, num_shards,
per_host_input_for_training=tf_estimator.tpu.InputPipelineConfig.PER_HOST_V2))`;
`TPUEstimator(export_to_tpu=False)`; train in `steps_per_eval` chunks with evaluate after each; export with
`tf_estimator.export.TensorServingInputReceiver` over a string placeholder decoded by `tf.map_fn`.

Deliberate differences from the original: no TPUClusterResolver on CPU, float32 precision, and a
`--seed` that goes to RunConfig.tf_random_seed and the shuffle.
"""

import os

import numpy as np
from absl import app, flags, logging

import compat_support
import tensorflow.compat.v1 as tf
import tensorflow.compat.v2 as tf2
import estimators

flags.DEFINE_string("model_dir", None, "Estimator model_dir.")
flags.DEFINE_integer("steps", 300, "Training steps.")
flags.DEFINE_integer("steps_per_eval", 150, "Training steps between evaluations.")
flags.DEFINE_integer("seed", 0, "RunConfig.tf_random_seed and shuffle seed.")
flags.DEFINE_bool("use_tpu", False, "Run on a TPU.")
flags.DEFINE_string("precision", "float32", "bfloat16 or float32.")
flags.DEFINE_bool("transpose_input", True, "Feed HWCN batches (the TPU double-transpose trick).")
flags.DEFINE_bool("skip_host_call", False, "Do not write training summaries from the host_call.")
flags.DEFINE_integer("iterations_per_loop", 50, "Steps per TPU loop.")
flags.DEFINE_integer("train_batch_size", 64, "Global training batch.")
flags.DEFINE_integer("eval_batch_size", 100, "Global evaluation batch.")
FLAGS = flags.FLAGS

MEAN_RGB = [0.286 * 255] * 3
STDDEV_RGB = [0.353 * 255] * 3
MOVING_AVERAGE_DECAY = 0.9
EPSILON = 1e-5
NUM_TRAIN_IMAGES = 6000
NUM_EVAL_IMAGES = 2000


# -- resnet_model ------------------------------------------------------------------------------------------
def batch_norm_relu(inputs, is_training, relu=True, init_zero=False):
    gamma_initializer = tf.zeros_initializer() if init_zero else tf.ones_initializer()
    inputs = tf.layers.batch_normalization(
        inputs=inputs, axis=3, momentum=MOVING_AVERAGE_DECAY, epsilon=EPSILON, center=True, scale=True,
        training=is_training, fused=True, gamma_initializer=gamma_initializer)
    return tf.nn.relu(inputs) if relu else inputs


def fixed_padding(inputs, kernel_size):
    pad_total = kernel_size - 1
    pad_beg = pad_total // 2
    return tf.pad(inputs, [[0, 0], [pad_beg, pad_total - pad_beg], [pad_beg, pad_total - pad_beg], [0, 0]])


def conv2d_fixed_padding(inputs, filters, kernel_size, strides):
    if strides > 1:
        inputs = fixed_padding(inputs, kernel_size)
    return tf.layers.conv2d(
        inputs=inputs, filters=filters, kernel_size=kernel_size, strides=strides,
        padding=("SAME" if strides == 1 else "VALID"), use_bias=False,
        kernel_initializer=tf.variance_scaling_initializer())


def residual_block(inputs, filters, is_training, strides, use_projection=False):
    shortcut = inputs
    if use_projection:
        shortcut = conv2d_fixed_padding(inputs=inputs, filters=filters, kernel_size=1, strides=strides)
        shortcut = batch_norm_relu(shortcut, is_training, relu=False)
    inputs = conv2d_fixed_padding(inputs=inputs, filters=filters, kernel_size=3, strides=strides)
    inputs = batch_norm_relu(inputs, is_training)
    inputs = conv2d_fixed_padding(inputs=inputs, filters=filters, kernel_size=3, strides=1)
    inputs = batch_norm_relu(inputs, is_training, relu=False, init_zero=True)
    return tf.nn.relu(inputs + shortcut)


def block_group(inputs, filters, blocks, strides, is_training, name):
    inputs = residual_block(inputs, filters, is_training, strides, use_projection=True)
    for _ in range(1, blocks):
        inputs = residual_block(inputs, filters, is_training, 1)
    return tf.identity(inputs, name)


def resnet_v1(num_classes, layers=(1, 1)):
    """A ResNet-v1 model function: inputs, is_training -> logits."""

    def model(inputs, is_training):
        inputs = conv2d_fixed_padding(inputs=inputs, filters=8, kernel_size=3, strides=1)
        inputs = tf.identity(inputs, "initial_conv")
        inputs = batch_norm_relu(inputs, is_training)
        inputs = tf.layers.max_pooling2d(inputs=inputs, pool_size=3, strides=2, padding="SAME")
        inputs = tf.identity(inputs, "initial_max_pool")
        inputs = block_group(inputs, 8, layers[0], 1, is_training, "block_group1")
        inputs = block_group(inputs, 16, layers[1], 2, is_training, "block_group2")
        pool_size = (inputs.shape[1], inputs.shape[2])
        inputs = tf.layers.average_pooling2d(inputs=inputs, pool_size=pool_size, strides=1, padding="VALID")
        inputs = tf.identity(inputs, "final_avg_pool")
        inputs = tf.reshape(inputs, [-1, 16])
        inputs = tf.layers.dense(
            inputs=inputs, units=num_classes, kernel_initializer=tf.random_normal_initializer(stddev=0.01))
        return tf.identity(inputs, "final_dense")

    return model


# -- resnet_main ---------------------------------------------------------------------------------------------
def learning_rate_schedule(params, current_epoch):
    """Linear warm-up over the first epoch, then steps down by 10 at epochs 2 and 3."""
    scaled_lr = params["base_learning_rate"] * (params["train_batch_size"] / 256.0)
    lr_schedule = [(1.0, 1), (0.1, 2), (0.01, 3)]
    decay_rate = scaled_lr * lr_schedule[0][0] * current_epoch / lr_schedule[0][1]
    for mult, start_epoch in lr_schedule:
        decay_rate = tf.where(current_epoch < start_epoch, decay_rate, scaled_lr * mult)
    return decay_rate


def resnet_model_fn(features, labels, mode, params):
    if isinstance(features, dict):
        features = features["feature"]

    if params["transpose_input"] and mode != estimators.ModeKeys.PREDICT:
        features = tf.transpose(features, [3, 0, 1, 2])  # HWCN to NHWC

    features -= tf.constant(MEAN_RGB, shape=[1, 1, 3], dtype=features.dtype)
    features /= tf.constant(STDDEV_RGB, shape=[1, 1, 3], dtype=features.dtype)

    def build_network():
        network = resnet_v1(num_classes=params["num_label_classes"])
        return network(inputs=features, is_training=(mode == estimators.ModeKeys.TRAIN))

    if params["precision"] == "bfloat16":
        with tf.tpu.bfloat16_scope():
            logits = build_network()
        logits = tf.cast(logits, tf.float32)
    elif params["precision"] == "float32":
        logits = build_network()

    if mode == estimators.ModeKeys.PREDICT:
        predictions = {
            "classes": tf.argmax(logits, axis=1),
            "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
        }
        return estimators.EstimatorSpec(
            mode=mode, predictions=predictions,
            export_outputs={"classify": estimators.export.PredictOutput(predictions)})

    batch_size = params["batch_size"]  # noqa: F841 - the original reads it too

    one_hot_labels = tf.one_hot(labels, params["num_label_classes"])
    cross_entropy = tf.losses.softmax_cross_entropy(
        logits=logits, onehot_labels=one_hot_labels, label_smoothing=params["label_smoothing"])
    loss = cross_entropy + params["weight_decay"] * tf.add_n(
        [tf.nn.l2_loss(v) for v in tf.trainable_variables() if "batch_normalization" not in v.name])

    host_call = None
    if mode == estimators.ModeKeys.TRAIN:
        global_step = tf.train.get_global_step()
        steps_per_epoch = params["num_train_images"] / params["train_batch_size"]
        current_epoch = tf.cast(global_step, tf.float32) / steps_per_epoch
        learning_rate = learning_rate_schedule(params, current_epoch)
        optimizer = tf.train.MomentumOptimizer(
            learning_rate=learning_rate, momentum=params["momentum"], use_nesterov=True)
        if params["use_tpu"]:
            optimizer = estimators.CrossShardOptimizer(optimizer)

        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = optimizer.minimize(loss, global_step)

        if not params["skip_host_call"]:
            def host_call_fn(gs, loss, lr, ce):
                gs = gs[0]
                with tf2.summary.create_file_writer(
                        params["model_dir"], max_queue=params["iterations_per_loop"]).as_default():
                    with tf2.summary.record_if(True):
                        tf2.summary.scalar("loss", loss[0], step=gs)
                        tf2.summary.scalar("learning_rate", lr[0], step=gs)
                        tf2.summary.scalar("current_epoch", ce[0], step=gs)
                    return tf.summary.all_v2_summary_ops()

            gs_t = tf.reshape(global_step, [1])
            loss_t = tf.reshape(loss, [1])
            lr_t = tf.reshape(learning_rate, [1])
            ce_t = tf.reshape(current_epoch, [1])
            host_call = (host_call_fn, [gs_t, loss_t, lr_t, ce_t])
    else:
        train_op = None

    eval_metrics = None
    if mode == estimators.ModeKeys.EVAL:
        def metric_fn(labels, logits):
            predictions = tf.argmax(logits, axis=1)
            top_1_accuracy = tf.metrics.accuracy(labels, predictions)
            in_top_5 = tf.cast(tf.nn.in_top_k(logits, labels, 5), tf.float32)
            top_5_accuracy = tf.metrics.mean(in_top_5)
            return {"top_1_accuracy": top_1_accuracy, "top_5_accuracy": top_5_accuracy}

        eval_metrics = (metric_fn, [labels, logits])

    return estimators.TPUEstimatorSpec(
        mode=mode, loss=loss, train_op=train_op, host_call=host_call, eval_metrics=eval_metrics)


# -- imagenet_input ------------------------------------------------------------------------------------------
def preprocess_image(image, is_training):
    """uint8 [28, 28, 1] -> float32 [28, 28, 3] in [0, 255], flipped at random when training."""
    image = tf.image.grayscale_to_rgb(tf.cast(image, tf.float32))
    if is_training:
        image = tf.image.random_flip_left_right(image)
    return image


def image_serving_input_fn():
    """Serving input fn for raw images: a batch of uint8 28x28 images as bytes."""

    def _preprocess_image(image_bytes):
        image = tf.reshape(tf.io.decode_raw(image_bytes, tf.uint8), [28, 28, 1])
        return preprocess_image(image, is_training=False)

    image_bytes_list = tf.placeholder(shape=[None], dtype=tf.string)
    images = tf.map_fn(_preprocess_image, image_bytes_list, back_prop=False, dtype=tf.float32)
    return estimators.export.TensorServingInputReceiver(features=images, receiver_tensors=image_bytes_list)


class ImageInput:
    """input_fn generator over an in-memory image slice (ImageNetInput's role)."""

    def __init__(self, is_training, images, labels, transpose_input, seed):
        self.is_training, self.images, self.labels = is_training, images, labels
        self.transpose_input, self.seed = transpose_input, seed

    def set_shapes(self, batch_size, images, labels):
        images.set_shape(images.get_shape().merge_with(tf.TensorShape([batch_size, None, None, None])))
        labels.set_shape(labels.get_shape().merge_with(tf.TensorShape([batch_size])))
        if self.transpose_input:
            images = tf.transpose(images, [1, 2, 3, 0])  # NHWC to HWCN
        return images, labels

    def input_fn(self, params):
        batch_size = params["batch_size"]
        dataset = tf.data.Dataset.from_tensor_slices((self.images, self.labels))
        if self.is_training:
            dataset = dataset.shuffle(1024, seed=self.seed).repeat()
        dataset = dataset.map(lambda image, label: (preprocess_image(image, self.is_training), label))
        dataset = dataset.batch(batch_size, drop_remainder=True)
        dataset = dataset.map(lambda images, labels: self.set_shapes(batch_size, images, labels))
        return dataset.prefetch(tf.data.experimental.AUTOTUNE)


def main(unused_argv):
    params = {
        "use_tpu": FLAGS.use_tpu, "model_dir": FLAGS.model_dir, "precision": FLAGS.precision,
        "transpose_input": FLAGS.transpose_input, "skip_host_call": FLAGS.skip_host_call,
        "iterations_per_loop": FLAGS.iterations_per_loop, "train_batch_size": FLAGS.train_batch_size,
        "eval_batch_size": FLAGS.eval_batch_size, "num_train_images": NUM_TRAIN_IMAGES,
        "num_eval_images": NUM_EVAL_IMAGES, "num_label_classes": 10, "base_learning_rate": 0.4,
        "momentum": 0.9, "weight_decay": 1e-4, "label_smoothing": 0.0, "train_steps": FLAGS.steps,
    }
    config = estimators.tpu.RunConfig(
        model_dir=FLAGS.model_dir,
        tf_random_seed=FLAGS.seed,
        save_checkpoints_steps=max(100, params["iterations_per_loop"]),
        log_step_count_steps=50,
        session_config=tf.ConfigProto(graph_options=tf.GraphOptions()),
        tpu_config=estimators.TPUConfig(
            iterations_per_loop=params["iterations_per_loop"],
            num_shards=8,
            per_host_input_for_training=estimators.InputPipelineConfig.PER_HOST_V2))
    resnet_classifier = estimators.TPUEstimator(
        use_tpu=params["use_tpu"],
        model_fn=resnet_model_fn,
        config=config,
        params=params,
        train_batch_size=params["train_batch_size"],
        eval_batch_size=params["eval_batch_size"],
        export_to_tpu=False)

    train_images, train_labels = compat_support.fashion_mnist("train", 0, NUM_TRAIN_IMAGES)
    eval_images, eval_labels = compat_support.fashion_mnist("test", 0, NUM_EVAL_IMAGES)
    train_images, eval_images = train_images[..., None], eval_images[..., None]
    train_labels, eval_labels = train_labels.astype(np.int32), eval_labels.astype(np.int32)
    image_train = ImageInput(True, train_images, train_labels, FLAGS.transpose_input, FLAGS.seed)
    image_eval = ImageInput(False, eval_images, eval_labels, FLAGS.transpose_input, FLAGS.seed)

    eval_steps = NUM_EVAL_IMAGES // params["eval_batch_size"]
    current_step = 0
    evaluations = []
    while current_step < FLAGS.steps:
        next_checkpoint = min(current_step + FLAGS.steps_per_eval, FLAGS.steps)
        resnet_classifier.train(input_fn=image_train.input_fn, max_steps=next_checkpoint)
        current_step = next_checkpoint
        logging.info("Finished training up to step %d.", next_checkpoint)
        eval_results = resnet_classifier.evaluate(input_fn=image_eval.input_fn, steps=eval_steps)
        logging.info("Eval results at step %d: %s", next_checkpoint, eval_results)
        evaluations.append(eval_results)

    export_path = resnet_classifier.export_saved_model(
        export_dir_base=os.path.join(FLAGS.model_dir, "export"), serving_input_receiver_fn=image_serving_input_fn)

    test_images, test_labels = compat_support.fashion_mnist("test", 2000, 10)
    predictions = list(resnet_classifier.predict(
        input_fn=lambda params: tf.data.Dataset.from_tensor_slices(
            {"feature": tf.image.grayscale_to_rgb(tf.cast(test_images[..., None], tf.float32))}).batch(5)))
    compat_support.emit({
        "program": "resnet_tpu",
        "eval": evaluations[-1],
        "evaluations": evaluations,
        "loss_curve": compat_support.loss_curve(FLAGS.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(FLAGS.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, test_labels),
        "variables": compat_support.variables(resnet_classifier),
        "moving_statistics": compat_support.moving_statistics(resnet_classifier),
        "export": compat_support.export_summary(export_path, {"input": [img.tobytes() for img in test_images[:2]]}),
    })


if __name__ == "__main__":
    logging.set_verbosity(logging.INFO)
    app.run(main)
