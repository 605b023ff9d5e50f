"""What tf.keras.estimator.model_to_estimator (tensorflow-estimator 2.15, checkpoint_format='saver') wrote.

Run with the TF 2.15 reference venv; rewrites keras_model_to_estimator_215.json beside this file:

    /work/ref215/bin/python tests/reference/make_keras_model_to_estimator_215.py

For each model (the same ones tests/test_keras_model.py builds with Keras 3): the checkpoint's
variable names and shapes after one training step, and the BatchNorm moving statistics after a step
with learning rate 0, which show whether 2.15 started them from the Keras model's values.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

keras = tf.keras
x = np.ones((4, 3), np.float32)
y = np.zeros((4,), np.int32)


def train_one_step(model, features):
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=tempfile.mkdtemp(),
                                                checkpoint_format="saver")
    est.train(lambda: tf.data.Dataset.from_tensor_slices((features, y)).batch(4), steps=1)
    return est


def variables(est):
    return {name: list(np.shape(est.get_variable_value(name))) for name in est.get_variable_names()}


def main():
    out = {}
    model = keras.Sequential([keras.layers.Input((3,)), keras.layers.Dense(4), keras.layers.BatchNormalization(),
                              keras.layers.Dense(2)])
    model.compile(keras.optimizers.legacy.Adam(0.01), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    out["sequential_input_batchnorm_adam"] = variables(train_one_step(model, x))

    model = keras.Sequential([keras.layers.Dense(4, name="first"), keras.layers.Dense(2, name="second")])
    model.compile("sgd", "sparse_categorical_crossentropy")
    model.fit(x, y, verbose=0)  # built by fit: no Input layer
    out["sequential_built_by_fit_sgd"] = variables(train_one_step(model, x))

    inputs = keras.Input((3,), name="a")
    inner = keras.Sequential([keras.layers.Dense(3, name="inner")], name="sub")
    outputs = keras.layers.Dense(2, name="head")(inner(keras.layers.Dense(4, name="h")(inputs)))
    model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.legacy.SGD(0.1, momentum=0.9), "sparse_categorical_crossentropy")
    out["functional_nested_momentum"] = variables(train_one_step(model, {"a": x}))

    model = keras.Sequential([keras.layers.Input((3,)), keras.layers.BatchNormalization(name="bn"),
                              keras.layers.Dense(2)])
    model.compile(keras.optimizers.legacy.SGD(0.0), "sparse_categorical_crossentropy")
    model.layers[0].moving_mean.assign([1.0, 2.0, 3.0])
    model.layers[0].moving_variance.assign([4.0, 5.0, 6.0])
    est = train_one_step(model, x)  # batch mean 1, variance 0; momentum 0.99
    out["batchnorm_statistics_after_one_step"] = {
        "keras_moving_mean": [1.0, 2.0, 3.0], "keras_moving_variance": [4.0, 5.0, 6.0],
        "moving_mean": est.get_variable_value("bn/moving_mean").tolist(),
        "moving_variance": est.get_variable_value("bn/moving_variance").tolist(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_model_to_estimator_215.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
