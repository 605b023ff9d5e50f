"""The 2018 Colab Fashion-MNIST Keras network in a TPUEstimator model_fn: ported to estimators (imports only).

Modelled on tensorflow/tpu, tools/colab/fashion_mnist.ipynb at commit
645a4552e87c1c2c76618a8a554fefcabbfad217 (the 2018 Colab "Fashion MNIST with Keras and TPUs"):
its tf.keras.Sequential network (BatchNormalization -> Conv2D 5x5 elu -> MaxPooling2D -> Dropout,
three times; Dense elu, Dropout, Dense, softmax), AdamOptimizer(1e-3), sparse categorical
cross-entropy on the softmax output, the sparse_categorical_accuracy metric, a numpy generator of
random contiguous batches, and predictions for the first 16 test images. The notebook trained
through `tf.contrib.tpu.keras_to_tpu_model`, which TF 2 removed; this program is the TPUEstimator
form such notebooks were rewritten to (the Keras model built in model_fn), and it is a re-creation
written for this test, not a copy. Scaled down: 16/32/64 filters and Dense(64) instead of 64/128/256
and Dense(256); global batch 128 instead of 1024; a 6,000/2,000-image slice.

APIs exercised: `tf.keras.Sequential` of Keras layers (BatchNormalization with input_shape, Conv2D,
MaxPooling2D with and without strides, Dropout, Flatten, Dense, Activation) built inside a
TPUEstimator model_fn and called with training=; BatchNormalization moving averages run through
`model.get_updates_for(None) + model.get_updates_for(features)` grouped with the train op;
`tf.keras.losses.sparse_categorical_crossentropy` on probabilities; `tf.compat.v1.train.AdamOptimizer`
wrapped in `tf.compat.v1.tpu.CrossShardOptimizer` when params["use_tpu"] (on a CPU, TF 2.15's
CrossShardOptimizer fails outside a TPU shard context, so every original gates it);
`minimize(loss, var_list=model.trainable_variables, global_step=tf.compat.v1.train.get_global_step())`;
`tf.compat.v1.estimator.tpu.TPUEstimatorSpec` with `eval_metrics=(metric_fn, {...})` (a dict of
tensors) and `tf.compat.v1.metrics.accuracy`; `tf.compat.v1.estimator.tpu.RunConfig/TPUConfig`
(keyword iterations_per_loop); input_fn(params) using `params["batch_size"]` with
`tf.data.Dataset.from_generator` (train) and `from_tensor_slices` (eval, predict); predict_batch_size.
"""

import argparse

import numpy as np

import compat_support
import estimators
import tensorflow as tf

USE_TPU = False
LABEL_NAMES = ["t_shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle_boots"]


def build_model(input_shape):
    model = tf.keras.models.Sequential()
    model.add(tf.keras.layers.BatchNormalization(input_shape=input_shape))
    model.add(tf.keras.layers.Conv2D(16, (5, 5), padding="same", activation="elu"))
    model.add(tf.keras.layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2)))
    model.add(tf.keras.layers.Dropout(0.25))

    model.add(tf.keras.layers.BatchNormalization(input_shape=input_shape))
    model.add(tf.keras.layers.Conv2D(32, (5, 5), padding="same", activation="elu"))
    model.add(tf.keras.layers.MaxPooling2D(pool_size=(2, 2)))
    model.add(tf.keras.layers.Dropout(0.25))

    model.add(tf.keras.layers.BatchNormalization(input_shape=input_shape))
    model.add(tf.keras.layers.Conv2D(64, (5, 5), padding="same", activation="elu"))
    model.add(tf.keras.layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2)))
    model.add(tf.keras.layers.Dropout(0.25))

    model.add(tf.keras.layers.Flatten())
    model.add(tf.keras.layers.Dense(64))
    model.add(tf.keras.layers.Activation("elu"))
    model.add(tf.keras.layers.Dropout(0.5))
    model.add(tf.keras.layers.Dense(10))
    model.add(tf.keras.layers.Activation("softmax"))
    return model


def model_fn(features, labels, mode, params):
    training = mode == estimators.ModeKeys.TRAIN
    model = build_model(params["input_shape"])
    images = tf.cast(features, tf.float32)
    probabilities = model(images, training=training)

    if mode == estimators.ModeKeys.PREDICT:
        predictions = {"class_id": tf.argmax(probabilities, axis=1), "probabilities": probabilities}
        return estimators.TPUEstimatorSpec(mode, predictions=predictions)

    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, probabilities))

    if training:
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=params["learning_rate"])
        if params["use_tpu"]:
            optimizer = estimators.CrossShardOptimizer(optimizer)
        update_ops = model.get_updates_for(None) + model.get_updates_for(images)
        minimize_op = optimizer.minimize(
            loss, var_list=model.trainable_variables, global_step=tf.compat.v1.train.get_global_step())
        train_op = tf.group(minimize_op, *update_ops)
        return estimators.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def metric_fn(labels, probabilities):
        predicted = tf.argmax(probabilities, axis=1)
        return {"sparse_categorical_accuracy": tf.compat.v1.metrics.accuracy(labels, predicted)}

    return estimators.TPUEstimatorSpec(
        mode, loss=loss, eval_metrics=(metric_fn, {"labels": labels, "probabilities": probabilities}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    x_train, y_train = compat_support.fashion_mnist("train", 0, 6000)
    x_test, y_test = compat_support.fashion_mnist("test", 0, 2000)
    # add empty color dimension
    x_train = np.expand_dims(x_train, -1)
    x_test = np.expand_dims(x_test, -1)
    y_train, y_test = y_train.astype(np.int32), y_test.astype(np.int32)

    def train_gen(batch_size, rng=np.random.RandomState(args.seed)):
        while True:
            offset = rng.randint(0, x_train.shape[0] - batch_size)
            yield x_train[offset:offset + batch_size], y_train[offset:offset + batch_size]

    def train_input_fn(params):
        batch_size = params["batch_size"]
        return tf.data.Dataset.from_generator(
            lambda: train_gen(batch_size), output_types=(tf.uint8, tf.int32),
            output_shapes=((batch_size, 28, 28, 1), (batch_size,)))

    def eval_input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test))
        return dataset.batch(params["batch_size"], drop_remainder=True)

    def predict_input_fn(params):
        return tf.data.Dataset.from_tensor_slices(x_test[:16]).batch(params["batch_size"])

    run_config = estimators.tpu.RunConfig(
        model_dir=args.model_dir,
        tf_random_seed=args.seed,
        save_checkpoints_steps=100,
        tpu_config=estimators.TPUConfig(iterations_per_loop=100))
    estimator = estimators.TPUEstimator(
        model_fn=model_fn,
        config=run_config,
        use_tpu=USE_TPU,
        train_batch_size=128,
        eval_batch_size=100,
        predict_batch_size=16,
        params={"learning_rate": 1e-3, "input_shape": x_train.shape[1:], "use_tpu": USE_TPU})
    estimator.train(train_input_fn, max_steps=args.steps)
    results = estimator.evaluate(eval_input_fn, steps=len(x_test) // 100)
    predictions = list(estimator.predict(predict_input_fn))
    for prediction in predictions:
        print(LABEL_NAMES[prediction["class_id"]], f"{np.max(prediction['probabilities']):.3f}")

    compat_support.emit({
        "program": "fashion_colab",
        "eval": results,
        "loss_curve": compat_support.loss_curve(args.model_dir),
        "summary_tags": sorted(compat_support.scalar_events(args.model_dir)),
        "predictions": compat_support.prediction_summary(predictions, y_test[:16]),
        "variables": compat_support.variables(estimator),
        "moving_statistics": compat_support.moving_statistics(estimator),
    })


if __name__ == "__main__":
    main()
