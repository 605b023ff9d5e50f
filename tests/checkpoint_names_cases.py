"""model_fns whose checkpoint names we compare with what tf.estimator 2.15 wrote for the very same code.

Nothing here imports `estimators`: tests/reference/make_checkpoint_names_215.py runs these under TF 2.15
(Keras 2 behind tf.keras), the tests under this project (Keras 3 behind tf.keras). The estimator API comes
in as `spec` (EstimatorSpec) and `train_mode` (ModeKeys.TRAIN); TF1 optimizers take the global step.
"""

import numpy as np
import tensorflow as tf

CLASSES = 3
BATCH = 4


def _init(seed):
    return tf.keras.initializers.GlorotUniform(seed=seed)


def _loss(labels, logits):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def _train_op(optimizer, loss):
    with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
        return optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())


def keras_layers(spec, train_mode):
    """Conv2D, BatchNormalization and two Dense layers built in model_fn with default names; TF1 Adam."""

    def model_fn(features, labels, mode):
        # No conv bias before BatchNormalization: its gradient is zero, and Adam would amplify rounding noise.
        net = tf.keras.layers.Conv2D(2, 3, use_bias=False, kernel_initializer=_init(1))(features)
        net = tf.keras.layers.BatchNormalization()(net, training=mode == train_mode)
        net = tf.keras.layers.Flatten()(net)
        net = tf.keras.layers.Dense(4, activation="relu", kernel_initializer=_init(2))(net)
        logits = tf.keras.layers.Dense(CLASSES, kernel_initializer=_init(3))(net)
        loss = _loss(labels, logits)
        return spec(mode, loss=loss, train_op=_train_op(tf.compat.v1.train.AdamOptimizer(0.01), loss))

    return model_fn


def keras_sequential(spec, train_mode):
    """A tf.keras.Sequential without an Input, built and called in model_fn; TF1 Momentum."""

    def model_fn(features, labels, mode):
        model = tf.keras.Sequential([tf.keras.layers.Flatten(),
                                     tf.keras.layers.Dense(4, activation="relu", kernel_initializer=_init(4)),
                                     tf.keras.layers.Dense(CLASSES, kernel_initializer=_init(5))])
        loss = _loss(labels, model(features, training=mode == train_mode))
        return spec(mode, loss=loss, train_op=_train_op(tf.compat.v1.train.MomentumOptimizer(0.01, 0.9), loss))

    return model_fn


def named_layers_and_get_variable(spec, train_mode):
    """Explicitly named Keras layers (one name used twice) and get_variable in a variable_scope; TF1 RMSProp."""

    def model_fn(features, labels, mode):
        net = tf.keras.layers.Flatten()(features)
        net = tf.keras.layers.Dense(4, activation="relu", name="proj", kernel_initializer=_init(6))(net)
        net = tf.keras.layers.Dense(4, activation="relu", name="proj", kernel_initializer=_init(7))(net)
        with tf.compat.v1.variable_scope("head"):
            weights = tf.compat.v1.get_variable("weights", [4, CLASSES], initializer=_init(8))
            bias = tf.compat.v1.get_variable("bias", [CLASSES], initializer=tf.compat.v1.zeros_initializer())
        loss = _loss(labels, tf.matmul(net, weights) + bias)
        return spec(mode, loss=loss, train_op=_train_op(tf.compat.v1.train.RMSPropOptimizer(0.01), loss))

    return model_fn


def name_scopes(spec, train_mode):
    """Graph name scopes around a Keras layer, a tf.Variable and get_variable (which ignores them); TF1 Adagrad."""

    def model_fn(features, labels, mode):
        with tf.name_scope("tower"):
            net = tf.keras.layers.Flatten()(features)
            net = tf.keras.layers.Dense(4, activation="relu", kernel_initializer=_init(9))(net)
            scale = tf.Variable(tf.ones([4]), name="scale")
            with tf.compat.v1.variable_scope("head"):
                weights = tf.compat.v1.get_variable("weights", [4, CLASSES], initializer=_init(10))
        loss = _loss(labels, tf.matmul(net * scale, weights))
        return spec(mode, loss=loss, train_op=_train_op(tf.compat.v1.train.AdagradOptimizer(0.1), loss))

    return model_fn


CASES = {"keras_layers": keras_layers, "keras_sequential": keras_sequential,
         "named_layers_and_get_variable": named_layers_and_get_variable, "name_scopes": name_scopes}


def input_fn():
    rng = np.random.RandomState(0)
    images = rng.rand(4 * BATCH, 6, 6, 1).astype("float32")
    labels = rng.randint(0, CLASSES, 4 * BATCH).astype("int32")
    return tf.data.Dataset.from_tensor_slices((images, labels)).repeat().batch(BATCH, drop_remainder=True)


def listing(checkpoint_path: str) -> list:
    """[(name, shape, dtype)] of a checkpoint, sorted by name."""
    reader = tf.train.load_checkpoint(checkpoint_path)
    dtypes = reader.get_variable_to_dtype_map()
    return sorted([name, list(shape), dtypes[name].name] for name, shape in reader.get_variable_to_shape_map().items())
