"""The "Multi-worker training with Estimator" tutorial's program, in one process: re-creation, TF 2.15 form.

Modelled on tensorflow/docs, site/en/tutorials/distribute/multi_worker_with_estimator.ipynb at commit
60c51e7a4b34ff7e02b339b361a5bff7f091cbf8 (the notebook's code cells, as one program). This is a
re-creation written for this test, not a copy: the structure and every TF1/Estimator API the
tutorial uses are reproduced, scaled down (Conv2D with 8 filters and a 32-unit Dense layer instead
of 32 and 64; 4,000 Fashion-MNIST training images instead of MNIST's 60,000, one epoch of 63
batches of 64; a learning rate of 0.05 instead of 1e-4, which would not move the model in 63 steps).

APIs exercised: `tf.compat.v1.disable_eager_execution()` before anything else runs; an input_fn
taking `(mode, input_context=None)` that shards with `input_context.num_input_pipelines` /
`input_pipeline_id` when given one and returns `dataset.map(scale).cache().shuffle(BUFFER_SIZE).batch()`
(no repeat: training runs until the input ends); a model_fn `(features, labels, mode)` building a
`tf.keras.Sequential` (Conv2D(input_shape) / MaxPooling2D / Flatten / Dense) inside it and calling it
with `training=False`; `tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True,
reduction=tf.keras.losses.Reduction.NONE)` summed and scaled by 1 / BATCH_SIZE;
`tf.compat.v1.train.GradientDescentOptimizer.minimize(loss,
tf.compat.v1.train.get_or_create_global_step())`; an EVAL `EstimatorSpec` with the loss only;
`tf.estimator.RunConfig` (here without `train_distribute`: one process, no TF_CONFIG);
`tf.estimator.train_and_evaluate` with `TrainSpec(input_fn)` / `EvalSpec(input_fn)` (defaults: no
max_steps, evaluation for up to 100 steps).

Deliberate differences from the tutorial: no `MultiWorkerMirroredStrategy` (the tutorial's
`RunConfig(train_distribute=strategy)` needs a cluster; one process runs as the chief would, without
one); `tfds.load('mnist', as_supervised=True)` is `tf.data.Dataset.from_tensor_slices` over Fashion-MNIST
slices with the same element types (uint8 [28, 28, 1], int64); model_dir comes from --model_dir
rather than '/tmp/multiworker'; a `--seed` goes to RunConfig.tf_random_seed. The tutorial's PREDICT
branch (`EstimatorSpec(labels=labels, predictions=predictions)`, no mode: it would raise) is kept as
written and, as in the tutorial, never runs; the report has no predictions.
"""

import argparse
import os

import compat_support
import numpy as np
import tensorflow as tf

tf.compat.v1.disable_eager_execution()

BUFFER_SIZE = 10000
BATCH_SIZE = 64
NUM_TRAIN_EXAMPLES = 4000
NUM_EVAL_EXAMPLES = 2000


def load_mnist():
    """tfds.load(name='mnist', with_info=True, as_supervised=True)'s splits, from Fashion-MNIST slices."""
    splits = {}
    for name, split, count in (("train", "train", NUM_TRAIN_EXAMPLES), ("test", "test", NUM_EVAL_EXAMPLES)):
        images, labels = compat_support.fashion_mnist(split, 0, count)
        splits[name] = tf.data.Dataset.from_tensor_slices((images[..., np.newaxis], labels.astype(np.int64)))
    return splits, {"num_classes": 10}


def input_fn(mode, input_context=None):
    datasets, info = load_mnist()
    mnist_dataset = (datasets['train'] if mode == tf.estimator.ModeKeys.TRAIN else
                     datasets['test'])

    def scale(image, label):
        image = tf.cast(image, tf.float32)
        image /= 255
        return image, label

    if input_context:
        mnist_dataset = mnist_dataset.shard(input_context.num_input_pipelines,
                                            input_context.input_pipeline_id)
    return mnist_dataset.map(scale).cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE)


LEARNING_RATE = 0.05


def model_fn(features, labels, mode):
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(8, 3, activation='relu', input_shape=(28, 28, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(32, activation='relu'),
        tf.keras.layers.Dense(10)
    ])
    logits = model(features, training=False)

    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {'logits': logits}
        return tf.estimator.EstimatorSpec(labels=labels, predictions=predictions)

    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=LEARNING_RATE)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE)(labels, logits)
    loss = tf.reduce_sum(loss) * (1. / BATCH_SIZE)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss)

    return tf.estimator.EstimatorSpec(
        mode=mode,
        loss=loss,
        train_op=optimizer.minimize(loss, tf.compat.v1.train.get_or_create_global_step()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", default="/tmp/multiworker")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # One process: no cluster. (The tutorial's workers each get a TF_CONFIG naming the cluster and their task.)
    os.environ.pop("TF_CONFIG", None)

    config = tf.estimator.RunConfig(tf_random_seed=args.seed)

    classifier = tf.estimator.Estimator(model_fn=model_fn, model_dir=args.model_dir, config=config)
    result = tf.estimator.train_and_evaluate(
        classifier,
        train_spec=tf.estimator.TrainSpec(input_fn=input_fn),
        eval_spec=tf.estimator.EvalSpec(input_fn=input_fn)
    )
    eval_metrics = result[0] if result else None

    compat_support.emit({
        "program": "multiworker_tutorial",
        "eval": eval_metrics,
        "loss_curve": compat_support.loss_curve(args.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(args.model_dir)),
        "variables": compat_support.variables(classifier),
    })


if __name__ == "__main__":
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    main()
