"""The tf.layers CNN tutorial's Estimator on numpy arrays with a LoggingTensorHook: ported to estimators (imports only).

Modelled on tensorflow/tensorflow, tensorflow/examples/tutorials/layers/cnn_mnist.py at commit
15899aa777da37887a26aee6b4676547ad681d18 (the program of the "A Guide to TF Layers: Building a
Convolutional Neural Network" tutorial), in the spelling `tf_upgrade_v2` gives it on TF 2.x
(`tf.compat.v1.` for the TF1 names, `tf.estimator` kept). This is a re-creation written for this test,
not a copy: the structure and every TF1/Estimator API the tutorial uses are reproduced, scaled down
(8 and 16 conv filters and a 64-unit dense layer instead of 32, 64 and 1024; 300 steps of 50 instead
of 20,000 of 100; learning rate 0.05 instead of 0.001, which would not move the model in 300 steps;
the probabilities logged every 50 steps for 4 examples rather than the whole batch), on 6,000
Fashion-MNIST training images as float32 [N, 784] in [0, 1] and int32 labels, the arrays
`tf.contrib.learn.datasets.load_dataset("mnist")` gave.

APIs exercised: `tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)` at import;
`tf.compat.v1.layers.conv2d / max_pooling2d / dense / dropout(training=mode == TRAIN)` on
`tf.reshape(features["x"], [-1, 28, 28, 1])`; `tf.nn.softmax(logits, name="softmax_tensor")` read by
name by `tf.compat.v1.train.LoggingTensorHook(tensors={"probabilities": ...}, every_n_iter=50)` given
to `train(hooks=[...])`; `tf.compat.v1.losses.sparse_softmax_cross_entropy`;
`tf.compat.v1.train.GradientDescentOptimizer.minimize(loss=, global_step=tf.compat.v1.train.get_global_step())`;
`eval_metric_ops` with `tf.compat.v1.metrics.accuracy`; `tf.estimator.Estimator(model_fn, model_dir)`;
`tf.compat.v1.estimator.inputs.numpy_input_fn` for training (`num_epochs=None, shuffle=True`),
evaluation (`num_epochs=1, shuffle=False`) and prediction (no `y`); `train(steps=, hooks=)`,
`evaluate()`, `predict()`.

Deliberate differences from the tutorial: the model_dir comes from --model_dir, with a `--seed` given
to RunConfig.tf_random_seed; the hook logs a named slice of the softmax (the first 4 rows, an
`tf.identity` named "softmax_sample") so its lines stay short; the tutorial does not predict: here 10
examples are predicted with a third numpy_input_fn, as the Estimator tutorials of its time did. The
report counts the hook's log records (`counts.hook_logs`: every 50 steps from the first, 6 on TF 2.15).
"""

import argparse

import compat_support
import numpy as np
import estimators
import tensorflow as tf

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)


def cnn_model_fn(features, labels, mode):
    """Model function for CNN."""
    # Input Layer: [batch_size, 28, 28, 1]
    input_layer = tf.reshape(features["x"], [-1, 28, 28, 1])

    # Convolutional Layer #1 and Pooling Layer #1: [batch_size, 14, 14, 8]
    conv1 = tf.compat.v1.layers.conv2d(
        inputs=input_layer, filters=8, kernel_size=[5, 5], padding="same", activation=tf.nn.relu)
    pool1 = tf.compat.v1.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)

    # Convolutional Layer #2 and Pooling Layer #2: [batch_size, 7, 7, 16]
    conv2 = tf.compat.v1.layers.conv2d(
        inputs=pool1, filters=16, kernel_size=[5, 5], padding="same", activation=tf.nn.relu)
    pool2 = tf.compat.v1.layers.max_pooling2d(inputs=conv2, pool_size=[2, 2], strides=2)

    # Dense Layer with dropout
    pool2_flat = tf.reshape(pool2, [-1, 7 * 7 * 16])
    dense = tf.compat.v1.layers.dense(inputs=pool2_flat, units=64, activation=tf.nn.relu)
    dropout = tf.compat.v1.layers.dropout(inputs=dense, rate=0.4, training=mode == estimators.ModeKeys.TRAIN)

    # Logits Layer: [batch_size, 10]
    logits = tf.compat.v1.layers.dense(inputs=dropout, units=10)

    predictions = {
        # Generate predictions (for PREDICT and EVAL mode)
        "classes": tf.argmax(input=logits, axis=1),
        # Add `softmax_tensor` to the graph. It is used for PREDICT and by the `logging_hook`.
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    tf.identity(predictions["probabilities"][:4], name="softmax_sample")
    if mode == estimators.ModeKeys.PREDICT:
        return estimators.EstimatorSpec(mode=mode, predictions=predictions)

    # Calculate Loss (for both TRAIN and EVAL modes)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)

    # Configure the Training Op (for TRAIN mode)
    if mode == estimators.ModeKeys.TRAIN:
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.05)
        train_op = optimizer.minimize(loss=loss, global_step=tf.compat.v1.train.get_global_step())
        return estimators.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    # Add evaluation metrics (for EVAL mode)
    eval_metric_ops = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predictions["classes"])}
    return estimators.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)


def load_dataset():
    """load_dataset("mnist")'s arrays: images float32 [N, 784] in [0, 1], labels int32."""
    train_images, train_labels = compat_support.fashion_mnist("train", 0, 6000)
    eval_images, eval_labels = compat_support.fashion_mnist("test", 0, 2000)
    predict_images, predict_labels = compat_support.fashion_mnist("test", 2000, 10)

    def flat(images):
        return (images.reshape(-1, 784) / np.float32(255)).astype(np.float32)

    return (flat(train_images), train_labels, flat(eval_images), eval_labels, flat(predict_images),
            predict_labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", default="/tmp/mnist_convnet_model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()

    # Load training and eval data
    train_data, train_labels, eval_data, eval_labels, predict_data, predict_labels = load_dataset()
    train_labels = np.asarray(train_labels, dtype=np.int32)
    eval_labels = np.asarray(eval_labels, dtype=np.int32)

    # Create the Estimator
    mnist_classifier = estimators.Estimator(
        model_fn=cnn_model_fn, model_dir=args.model_dir, config=estimators.RunConfig(tf_random_seed=args.seed))

    # Set up logging for predictions
    # Log the values in the "Softmax" tensor with label "probabilities"
    tensors_to_log = {"probabilities": "softmax_sample"}
    logging_hook = tf.compat.v1.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=50)

    # Train the model
    train_input_fn = estimators.inputs.numpy_input_fn(
        x={"x": train_data},
        y=train_labels,
        batch_size=50,
        num_epochs=None,
        shuffle=True)
    with compat_support.LogRecordCounter(r"^probabilities = ") as hook_logs:
        mnist_classifier.train(
            input_fn=train_input_fn,
            steps=args.steps,
            hooks=[logging_hook])

    # Evaluate the model and print results
    eval_input_fn = estimators.inputs.numpy_input_fn(
        x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False)
    eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
    print(eval_results)

    predict_input_fn = estimators.inputs.numpy_input_fn(
        x={"x": predict_data}, num_epochs=1, shuffle=False)
    predictions = list(mnist_classifier.predict(input_fn=predict_input_fn))

    compat_support.emit({
        "program": "numpy_tutorial",
        "eval": eval_results,
        "loss_curve": compat_support.loss_curve(args.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(args.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, predict_labels),
        "variables": compat_support.variables(mnist_classifier),
        "counts": {"hook_logs": hook_logs.count},
    })


if __name__ == "__main__":
    main()
