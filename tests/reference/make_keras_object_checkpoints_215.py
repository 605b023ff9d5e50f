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


def run(name, model, x_name, xshape, optimizer, yshape=(1,), resume=False):
    model.compile(optimizer, "mse")
    model_dir = tempfile.mkdtemp()
    estimator = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=model_dir)
    x = np.linspace(0, 1, 8 * int(np.prod(xshape)), dtype=np.float32).reshape((8,) + xshape)
    y = np.ones((8,) + yshape, np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({x_name: x}, y)).repeat().batch(4)

    estimator.train(input_fn, steps=2)
    if resume:  # a second train() call, reading the first one's checkpoint back
        estimator.train(input_fn, steps=1)
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
for case, optimizer in [("rmsprop_momentum", tf.keras.optimizers.RMSprop(0.01, momentum=0.5)),
                        ("adadelta", "adadelta"), ("adagrad", "adagrad"), ("ftrl", "ftrl"), ("sgd", "sgd")]:
    run(case, two_dense(), "dense_input", (3,), optimizer, resume=True)
inputs = tf.keras.Input((4, 2), name="x")
attention = L.MultiHeadAttention(2, 3, name="mha", kernel_initializer="ones")(inputs, inputs)
run("multi_head_attention", tf.keras.Model(inputs, L.Dense(1, name="out", kernel_initializer="ones")(
    L.Flatten()(attention))), "x", (4, 2), "adam")
inputs = tf.keras.Input((3,), name="x", dtype="int32")
embedded = L.Flatten()(L.Embedding(5, 2, name="embedding", embeddings_initializer="ones")(inputs))
run("embedding", tf.keras.Model(inputs, L.Dense(1, name="out", kernel_initializer="ones")(embedded)), "x", (3,), "sgd")


class SharedNames(L.Layer):
    """Two weights named `w` (and two `v`, kept in a list), sublayers in a dict and in a private attribute."""

    def build(self, input_shape):
        self.a = self.add_weight(name="w", shape=(input_shape[-1], 1), initializer="ones")
        self.b = self.add_weight(name="w", shape=(1,), initializer="zeros")
        self.listed = [self.add_weight(name="v", shape=(1,), initializer="zeros"),
                       self.add_weight(name="v", shape=(1,), initializer="zeros")]
        self.parts = {"p": L.Dense(1, name="pd", kernel_initializer="ones"),
                      "q": [L.Dense(1, name="qd", kernel_initializer="ones")]}
        self._hidden = L.Dense(1, name="hid", kernel_initializer="ones")

    def call(self, x):
        return (tf.matmul(x, self.a) + self.b + self.listed[0] + self.listed[1] + self.parts["p"](x)
                + self.parts["q"][0](x) + self._hidden(x))


inputs = tf.keras.Input((3,), name="x")
run("shared_names", tf.keras.Model(inputs, SharedNames(name="two")(inputs)), "x", (3,), "sgd")


class Subclassed(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = L.Dense(1)

    def call(self, x):
        return self.dense(x)


subclassed = Subclassed()
subclassed.compile("sgd", "mse")
try:
    tf.keras.estimator.model_to_estimator(keras_model=subclassed)  # the default checkpoint_format
except ValueError as error:
    out["subclassed_default_error"] = str(error)
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
