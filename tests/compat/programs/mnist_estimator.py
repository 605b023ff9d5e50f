"""MNIST-style CNN on tf.estimator.Estimator with a tf.keras model inside model_fn: ported to estimators (imports only).

Modelled on tensorflow/models, official/r1/mnist/mnist.py at commit
714e077aa3d97969b53e9dc5b4e5b7ff44f28e40 and its official/r1/mnist/dataset.py at commit
baab84b0cad1bcd4fa24ddfdc15b0c26db59fa15. This is a re-creation written for this test, not a copy:
the structure and every TF1/Estimator API the original uses are reproduced, scaled down (8/16 conv
filters and a 128-unit dense layer instead of 32/64 and 1024; 6 epochs of a 6,000-example
Fashion-MNIST slice in raw IDX files, evaluated every 3 epochs, instead of 40 epochs of MNIST).

APIs exercised: `import tensorflow as tf` (TF2 API, v1 calls spelled tf.compat.v1); a
`tf.keras.Sequential` (Reshape with input_shape, Conv2D, one MaxPooling2D instance used twice,
Flatten, Dense, Dropout) built inside model_fn and called with training=; features as a tensor or a
dict with 'image'; `tf.estimator.EstimatorSpec` with `export_outputs={'classify':
tf.estimator.export.PredictOutput(...)}`; `tf.compat.v1.train.AdamOptimizer`;
`tf.compat.v1.losses.sparse_softmax_cross_entropy`; `tf.compat.v1.metrics.accuracy` in TRAIN (for a
summary) and in eval_metric_ops; `tf.identity(..., name)` for a `tf.estimator.LoggingTensorHook` that
logs tensors by name; `tf.summary.scalar` (the TF2 op) inside model_fn;
`minimize(loss, tf.compat.v1.train.get_or_create_global_step())`; `tf.estimator.RunConfig(
train_distribute=OneDeviceStrategy, session_config=tf.compat.v1.ConfigProto(...))` (the original's
distribution_utils gives a OneDeviceStrategy on a CPU-only machine); train() until the input ends
(epochs via Dataset.repeat), called twice; an eval input_fn returning `(features, labels)` tensors from
`tf.compat.v1.data.make_one_shot_iterator(...).get_next()`; `tf.data.FixedLengthRecordDataset`
IDX parsing with `tf.io.decode_raw` and header checks through `tf.io.gfile`; export with a
placeholder fed to `tf.estimator.export.build_raw_serving_input_receiver_fn`.

Deliberate differences from the original: TF 2.15 cannot make the original's top-level
`tf.compat.v1.placeholder` (eager), so the placeholder is made inside the serving input fn, with
shape [None, 784] (TF 2.15's Keras rejects the original's [None, 28, 28] against input_shape=(784,)), and
`export_savedmodel(..., strip_default_attrs=True)` (hidden on tf.estimator.Estimator in TF2) is
`export_saved_model`; `--steps` sets the epochs (steps x batch / examples); a `--seed` goes to
RunConfig.tf_random_seed; flags are absl flags defined here instead of the official.utils helpers.
"""

import os

import numpy as np
from absl import app, flags, logging

import compat_support
import estimators
import tensorflow as tf

LEARNING_RATE = 1e-4
NUM_TRAIN_EXAMPLES = 6000

flags.DEFINE_string("data_dir", None, "Folder with the raw IDX files (made when missing).")
flags.DEFINE_string("model_dir", None, "Estimator model_dir.")
flags.DEFINE_string("export_dir", None, "Where to export the SavedModel (default model_dir/export).")
flags.DEFINE_integer("batch_size", 100, "Batch size.")
flags.DEFINE_integer("steps", 360, "Training steps in all; sets the number of epochs.")
flags.DEFINE_integer("epochs_between_evals", 3, "Epochs per train() call.")
flags.DEFINE_integer("seed", 0, "RunConfig.tf_random_seed.")

FLAGS = flags.FLAGS


def create_model(data_format):
    """The CNN as a tf.keras.Sequential."""
    if data_format == "channels_first":
        input_shape = [1, 28, 28]
    else:
        assert data_format == "channels_last"
        input_shape = [28, 28, 1]

    layers = tf.keras.layers
    max_pool = layers.MaxPooling2D((2, 2), (2, 2), padding="same", data_format=data_format)
    return tf.keras.Sequential([
        layers.Reshape(target_shape=input_shape, input_shape=(28 * 28,)),
        layers.Conv2D(8, 5, padding="same", data_format=data_format, activation=tf.nn.relu),
        max_pool,
        layers.Conv2D(16, 5, padding="same", data_format=data_format, activation=tf.nn.relu),
        max_pool,
        layers.Flatten(),
        layers.Dense(128, activation=tf.nn.relu),
        layers.Dropout(0.4),
        layers.Dense(10),
    ])


def model_fn(features, labels, mode, params):
    """The model_fn for the Estimator."""
    model = create_model(params["data_format"])
    image = features
    if isinstance(image, dict):
        image = features["image"]

    if mode == estimators.ModeKeys.PREDICT:
        logits = model(image, training=False)
        predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
        return estimators.EstimatorSpec(
            mode=estimators.ModeKeys.PREDICT,
            predictions=predictions,
            export_outputs={"classify": estimators.export.PredictOutput(predictions)})

    if mode == estimators.ModeKeys.TRAIN:
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=LEARNING_RATE)
        logits = model(image, training=True)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        accuracy = tf.compat.v1.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))

        # Named so the LoggingTensorHook finds them.
        tf.identity(LEARNING_RATE, "learning_rate")
        tf.identity(loss, "cross_entropy")
        tf.identity(accuracy[1], name="train_accuracy")
        tf.summary.scalar("train_accuracy", accuracy[1])

        return estimators.EstimatorSpec(
            mode=estimators.ModeKeys.TRAIN,
            loss=loss,
            train_op=optimizer.minimize(loss, tf.compat.v1.train.get_or_create_global_step()))

    if mode == estimators.ModeKeys.EVAL:
        logits = model(image, training=False)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        return estimators.EstimatorSpec(
            mode=estimators.ModeKeys.EVAL,
            loss=loss,
            eval_metric_ops={
                "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1)),
            })


# -- the original's dataset.py ------------------------------------------------------------------------------
def read32(bytestream):
    dt = np.dtype(np.uint32).newbyteorder(">")
    return np.frombuffer(bytestream.read(4), dtype=dt)[0]


def check_image_file_header(filename):
    with tf.io.gfile.GFile(filename, "rb") as f:
        magic = read32(f)
        read32(f)
        rows, cols = read32(f), read32(f)
        if magic != 2051 or rows != 28 or cols != 28:
            raise ValueError(f"Invalid MNIST image file {filename}")


def check_labels_file_header(filename):
    with tf.io.gfile.GFile(filename, "rb") as f:
        if read32(f) != 2049:
            raise ValueError(f"Invalid MNIST label file {filename}")


def mnist_dataset(directory, images_file, labels_file):
    images_file = os.path.join(directory, images_file)
    labels_file = os.path.join(directory, labels_file)
    check_image_file_header(images_file)
    check_labels_file_header(labels_file)

    def decode_image(image):
        image = tf.cast(tf.io.decode_raw(image, tf.uint8), tf.float32)
        return tf.reshape(image, [784]) / 255.0

    def decode_label(label):
        label = tf.reshape(tf.io.decode_raw(label, tf.uint8), [])
        return tf.cast(label, tf.int32)

    images = tf.data.FixedLengthRecordDataset(images_file, 28 * 28, header_bytes=16).map(decode_image)
    labels = tf.data.FixedLengthRecordDataset(labels_file, 1, header_bytes=8).map(decode_label)
    return tf.data.Dataset.zip((images, labels))


def make_data(data_dir):
    """The raw IDX files the original downloads, from Fashion-MNIST slices."""
    if tf.io.gfile.exists(os.path.join(data_dir, "t10k-labels-idx1-ubyte")):
        return
    compat_support.write_idx(data_dir, "train", *compat_support.fashion_mnist("train", 0, NUM_TRAIN_EXAMPLES))
    compat_support.write_idx(data_dir, "t10k", *compat_support.fashion_mnist("test", 0, 2000))


def run_mnist(flags_obj):
    data_dir = flags_obj.data_dir or os.path.join(flags_obj.model_dir, "data")
    make_data(data_dir)
    session_config = tf.compat.v1.ConfigProto(
        inter_op_parallelism_threads=0, intra_op_parallelism_threads=0, allow_soft_placement=True)
    distribution_strategy = tf.distribute.OneDeviceStrategy("device:CPU:0")
    run_config = estimators.RunConfig(
        train_distribute=distribution_strategy, session_config=session_config, tf_random_seed=flags_obj.seed)

    data_format = "channels_first" if tf.config.list_physical_devices("GPU") else "channels_last"
    mnist_classifier = estimators.Estimator(
        model_fn=model_fn, model_dir=flags_obj.model_dir, config=run_config, params={"data_format": data_format})

    def train_input_fn():
        ds = mnist_dataset(data_dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte")
        ds = ds.cache().shuffle(buffer_size=50000).batch(flags_obj.batch_size)
        return ds.repeat(flags_obj.epochs_between_evals)

    def eval_input_fn():
        ds = mnist_dataset(data_dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
        return tf.compat.v1.data.make_one_shot_iterator(ds.batch(flags_obj.batch_size)).get_next()

    train_hooks = [estimators.LoggingTensorHook(
        tensors={name: name for name in ("learning_rate", "cross_entropy", "train_accuracy")}, every_n_iter=100)]

    train_epochs = flags_obj.steps * flags_obj.batch_size // NUM_TRAIN_EXAMPLES
    evaluations = []
    for _ in range(train_epochs // flags_obj.epochs_between_evals):
        mnist_classifier.train(input_fn=train_input_fn, hooks=train_hooks)
        eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
        print(f"\nEvaluation results:\n\t{eval_results}\n")
        evaluations.append(eval_results)

    export_dir = flags_obj.export_dir or os.path.join(flags_obj.model_dir, "export")

    def serving_input_receiver_fn():
        image = tf.compat.v1.placeholder(tf.float32, [None, 784])
        return estimators.export.build_raw_serving_input_receiver_fn({"image": image})()

    export_path = mnist_classifier.export_saved_model(export_dir, serving_input_receiver_fn)

    test_images, test_labels = compat_support.fashion_mnist("test", 2000, 10)
    predictions = list(mnist_classifier.predict(
        input_fn=lambda: tf.data.Dataset.from_tensor_slices(
            {"image": test_images.reshape(10, 784).astype(np.float32) / 255.0}).batch(5)))
    compat_support.emit({
        "program": "mnist_estimator",
        "eval": evaluations[-1],
        "evaluations": evaluations,
        "loss_curve": compat_support.loss_curve(flags_obj.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(flags_obj.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, test_labels),
        "variables": compat_support.variables(mnist_classifier),
        "export": compat_support.export_summary(
            export_path, {"image": test_images[:2].reshape(2, 784).astype(np.float32) / 255.0}),
    })


def main(_):
    run_mnist(flags.FLAGS)


if __name__ == "__main__":
    logging.set_verbosity(logging.INFO)
    app.run(main)
