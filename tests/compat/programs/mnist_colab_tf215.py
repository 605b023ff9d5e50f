"""The "MNIST Estimator to TPUEstimator" Colab notebook's program, in one process: re-creation, TF 2.15 form.

Modelled on tensorflow/tpu, tools/colab/mnist_tpuestimator.ipynb at commit
009812fbbb2a8f787b63c40502a02fc9aef273be (its code cells, as one program). This is a re-creation written
for this test, not a copy: the structure and every TF1/TPUEstimator API the notebook uses are reproduced,
scaled down (6000 training images, 2 epochs, 8 cores' global batch of 8 x 32 kept), on Fashion-MNIST
written as the raw IDX files the notebook reads from gs://mnist-public.

APIs exercised: raw IDX files through `tf.data.FixedLengthRecordDataset(header_bytes=...)` and
`map(num_parallel_calls=16)`, `Dataset.zip`, one-hot labels; training data `cache().shuffle(5000,
reshuffle_each_iteration=True).repeat().batch(drop_remainder=True).prefetch(-1)`, validation data batched
then repeated forever; input_fns as `lambda params: ...` reading `params['batch_size']`; a model_fn with
`tf.layers.Conv2D(use_bias=False)`, `tf.layers.BatchNormalization(scale=False, center=True)(training=...)`,
`tf.layers.Flatten/Dense/Dropout`, `tf.losses.softmax_cross_entropy`, `0.0001 + exponential_decay` on the
global step, AdamOptimizer wrapped in CrossShardOptimizer when `params['use_tpu']`, the batch-norm update
ops run with the train op (the notebook's `create_train_op`), `TPUEstimatorSpec(eval_metrics=(metric_fn,
[classes, labels]))` with `tf.metrics.accuracy`; `tpu.RunConfig(tpu_config=TPUConfig(iterations))`;
TPUEstimator with train/eval/predict batch sizes and `export_to_tpu=False`; train(steps), evaluate(steps=1)
over the whole validation set in one batch, `export_saved_model` with a TensorServingInputReceiver of a
placeholder, and `predict(yield_single_examples=False)` read with `next()` (on the finite font digits and on
the validation input_fn, which repeats forever: the generator is left unfinished when the program ends).

Deliberate differences from the notebook: no TPU detection (`USE_TPU = False`; the notebook falls back to
this when TPUClusterResolver finds none), no Colab auth, plots or ML Engine deployment; `tf.contrib`'s
`create_train_op` (gone since TF 2.0) is the train op grouped after the UPDATE_OPS; ten "font digits" are
validation images; a `--seed` goes to RunConfig.tf_random_seed; the model_dir is a local folder.
"""

import argparse
import math
import os

import compat_support
import numpy as np
import tensorflow.compat.v1 as tf

BATCH_SIZE = 32
USE_TPU = False
EPOCHS = 2
NUM_TRAIN = 6000
NUM_VALIDATION = 2000


def read_label(tf_bytestring):
    label = tf.decode_raw(tf_bytestring, tf.uint8)
    label = tf.reshape(label, [])
    label = tf.one_hot(label, 10)
    return label


def read_image(tf_bytestring):
    image = tf.decode_raw(tf_bytestring, tf.uint8)
    image = tf.cast(image, tf.float32) / 255.0
    image = tf.reshape(image, [28 * 28])
    return image


def load_dataset(image_file, label_file):
    imagedataset = tf.data.FixedLengthRecordDataset(image_file, 28 * 28, header_bytes=16)
    imagedataset = imagedataset.map(read_image, num_parallel_calls=16)
    labelsdataset = tf.data.FixedLengthRecordDataset(label_file, 1, header_bytes=8)
    labelsdataset = labelsdataset.map(read_label, num_parallel_calls=16)
    dataset = tf.data.Dataset.zip((imagedataset, labelsdataset))
    return dataset


def get_training_dataset(image_file, label_file, batch_size):
    dataset = load_dataset(image_file, label_file)
    dataset = dataset.cache()
    dataset = dataset.shuffle(5000, reshuffle_each_iteration=True)
    dataset = dataset.repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.prefetch(-1)
    return dataset


def get_validation_dataset(image_file, label_file, batch_size):
    dataset = load_dataset(image_file, label_file)
    dataset = dataset.cache()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.repeat()
    return dataset


def model_fn(features, labels, mode, params):
    is_training = (mode == tf.estimator.ModeKeys.TRAIN)

    x = features
    y = tf.reshape(x, [-1, 28, 28, 1])

    y = tf.layers.Conv2D(filters=6, kernel_size=3, padding='same', use_bias=False)(y)
    y = tf.layers.BatchNormalization(scale=False, center=True)(y, training=is_training)
    y = tf.nn.relu(y)

    y = tf.layers.Conv2D(filters=12, kernel_size=6, padding='same', use_bias=False, strides=2)(y)
    y = tf.layers.BatchNormalization(scale=False, center=True)(y, training=is_training)
    y = tf.nn.relu(y)

    y = tf.layers.Conv2D(filters=24, kernel_size=6, padding='same', use_bias=False, strides=2)(y)
    y = tf.layers.BatchNormalization(scale=False, center=True)(y, training=is_training)
    y = tf.nn.relu(y)

    y = tf.layers.Flatten()(y)
    y = tf.layers.Dense(200, use_bias=False)(y)
    y = tf.layers.BatchNormalization(scale=False, center=True)(y, training=is_training)
    y = tf.nn.relu(y)
    y = tf.layers.Dropout(0.5)(y, training=is_training)

    logits = tf.layers.Dense(10)(y)
    predictions = tf.nn.softmax(logits)
    classes = tf.math.argmax(predictions, axis=-1)

    if mode != tf.estimator.ModeKeys.PREDICT:
        loss = tf.losses.softmax_cross_entropy(labels, logits)

        step = tf.train.get_or_create_global_step()
        lr = 0.0001 + tf.train.exponential_decay(0.01, step, 2000 // 8, 1 / math.e)

        optimizer = tf.train.AdamOptimizer(lr)
        if params['use_tpu']:
            optimizer = tf.tpu.CrossShardOptimizer(optimizer)

        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = optimizer.minimize(loss, step)

        def metric_fn(classes, labels):
            return {'accuracy': tf.metrics.accuracy(classes, tf.math.argmax(labels, axis=-1))}
        tpu_metrics = (metric_fn, [classes, labels])
    else:
        loss = train_op = tpu_metrics = None

    return tf.estimator.tpu.TPUEstimatorSpec(
        mode=mode,
        predictions={"predictions": predictions, "classes": classes},
        loss=loss,
        train_op=train_op,
        eval_metrics=tpu_metrics
    )


def serving_input_fn():
    inputs = {"serving_input": tf.placeholder(tf.float32, [None, 28, 28])}
    features = inputs['serving_input']
    return tf.estimator.export.TensorServingInputReceiver(features, inputs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", default="/tmp/mnist_colab")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data_dir = os.path.join(args.model_dir, "data")
    images, labels = compat_support.fashion_mnist("train", 0, NUM_TRAIN)
    compat_support.write_idx(data_dir, "train", images, labels)
    images, labels = compat_support.fashion_mnist("test", 0, NUM_VALIDATION)
    compat_support.write_idx(data_dir, "t10k", images, labels)
    training_images_file = os.path.join(data_dir, "train-images-idx3-ubyte")
    training_labels_file = os.path.join(data_dir, "train-labels-idx1-ubyte")
    validation_images_file = os.path.join(data_dir, "t10k-images-idx3-ubyte")
    validation_labels_file = os.path.join(data_dir, "t10k-labels-idx1-ubyte")

    def training_input_fn(params):
        return get_training_dataset(training_images_file, training_labels_file, params['batch_size'])

    def validation_input_fn(params):
        return get_validation_dataset(validation_images_file, validation_labels_file, params['batch_size'])

    global_batch_size = BATCH_SIZE * 8
    steps_per_epoch = NUM_TRAIN // global_batch_size
    tpu_iterations_per_loop = steps_per_epoch
    model_dir = os.path.join(args.model_dir, "mnistjobs", "job")

    training_config = tf.estimator.tpu.RunConfig(
        cluster=None,
        model_dir=model_dir,
        tf_random_seed=args.seed,
        tpu_config=tf.estimator.tpu.TPUConfig(tpu_iterations_per_loop))

    estimator = tf.estimator.tpu.TPUEstimator(
        model_fn=model_fn,
        model_dir=model_dir,
        train_batch_size=global_batch_size,
        eval_batch_size=NUM_VALIDATION,
        predict_batch_size=NUM_VALIDATION,
        config=training_config,
        use_tpu=USE_TPU,
        export_to_tpu=False)

    estimator.train(training_input_fn, steps=steps_per_epoch * EPOCHS)
    eval_results = estimator.evaluate(input_fn=validation_input_fn, steps=1)
    export_dir = estimator.export_saved_model(os.path.join(model_dir, "mnist"), serving_input_fn)
    loss_curve = compat_support.loss_curve(model_dir)
    summary_tags = sorted(compat_support.scalar_events(model_dir))
    font_digits = images[:10].reshape(10, 28 * 28).astype(np.float32) / 255.0
    # Read before predict: 2.15's unfinished generators keep their finalized graph as the default one.
    export = compat_support.export_summary(export_dir, {"serving_input": font_digits[:2].reshape(2, 28, 28)})
    variables = compat_support.variables(estimator)

    predictions = estimator.predict(lambda params: tf.data.Dataset.from_tensor_slices(font_digits).batch(10),
                                    yield_single_examples=False)
    predicted_font = next(predictions)
    predictions = estimator.predict(validation_input_fn, yield_single_examples=False)
    predicted_labels = next(predictions)['classes']
    rows = [{"classes": predicted_font["classes"][i], "predictions": predicted_font["predictions"][i]}
            for i in range(10)]

    compat_support.emit({
        "program": "mnist_colab",
        "eval": eval_results,
        "validation_accuracy": float(np.mean(predicted_labels == labels)),
        "loss_curve": loss_curve,
        "summary_tags": summary_tags,
        "predictions": compat_support.prediction_summary(rows, labels[:10]),
        "variables": variables,
        "export": export,
    })


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    main()
