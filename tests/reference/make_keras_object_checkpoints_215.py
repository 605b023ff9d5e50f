"""What tf.keras.estimator.model_to_estimator (TF 2.15.1 + tensorflow-estimator 2.15.0, default
checkpoint_format='checkpoint') wrote: object-based keys, their full names and the evaluated loss.

    /work/venv215/bin/python make_keras_object_checkpoints_215.py keras_object_checkpoints_215.json
"""

import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.python.training import saver as saver_lib

out = {}
L = tf.keras.layers


def run(name, model, x_name, xshape, optimizer, yshape=(1,)):
    model.compile(optimizer, "mse")
    model_dir = tempfile.mkdtemp()
    estimator = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=model_dir)
    x = np.linspace(0, 1, 8 * int(np.prod(xshape)), dtype=np.float32).reshape((8,) + xshape)
    y = np.ones((8,) + yshape, np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({x_name: x}, y)).repeat().batch(4)

    estimator.train(input_fn, steps=2)
    result = estimator.evaluate(input_fn, steps=1)
    path = tf.train.latest_checkpoint(model_dir)
    keras_path = tf.train.latest_checkpoint(os.path.join(model_dir, "keras"))
    out[name] = {"keys": sorted(tf.train.load_checkpoint(path).get_variable_to_shape_map()),
                 "full_names": saver_lib.object_graph_key_mapping(path), "loss": float(result["loss"]),
                 "global_step": int(result["global_step"]),
                 "keras_dir_keys": sorted(tf.train.load_checkpoint(keras_path).get_variable_to_shape_map())}


def two_dense(units=1, second=True):
    layers = [L.Dense(2 if second else units, input_shape=(3,), name="dense", kernel_initializer="ones")]
    if second:
        layers.append(L.Dense(units, name="out", kernel_initializer="ones"))
    return tf.keras.Sequential(layers)


run("adam", two_dense(), "dense_input", (3,), "adam")
run("rmsprop", two_dense(), "dense_input", (3,), "rmsprop")
run("sgd_momentum", two_dense(), "dense_input", (3,), tf.keras.optimizers.SGD(0.01, momentum=0.9))
run("lstm", tf.keras.Sequential([L.Reshape([4, 1], input_shape=[4]), L.LSTM(2, return_sequences=True), L.GRU(2),
                                 L.Dense(1)]), "reshape_input", (4,), "sgd")
inputs = tf.keras.Input((3,), name="x")
hidden = L.Dropout(0.1)(L.BatchNormalization(name="bn")(L.Dense(2, name="hidden", kernel_initializer="ones")(inputs)))
inner = tf.keras.Sequential([L.Dense(2, name="inner_a", kernel_initializer="ones", input_shape=(2,)),
                             L.Dense(1, name="inner_b", kernel_initializer="ones")], name="inner")
run("functional_nested", tf.keras.Model(inputs, inner(hidden)), "x", (3,), "adam")
run("tf_rmsprop", two_dense(), "dense_input", (3,), tf.compat.v1.train.RMSPropOptimizer(1e-3))
run("tf_adam", two_dense(2, second=False), "dense_input", (3,), tf.compat.v1.train.AdamOptimizer(1e-3), yshape=(2,))
run("rmsprop_centered", two_dense(2, second=False), "dense_input", (3,),
    tf.keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True), yshape=(2,))
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
