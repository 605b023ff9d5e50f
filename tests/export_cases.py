"""Export cases shared by our tests and the TF 2.15 reference script: the same model_fn and receivers.

Nothing here imports `estimators` (the reference runs under TF 2.15, where it cannot import): the
estimator API comes in as `api`, a namespace with EstimatorSpec, ModeKeys, export, Estimator and
train_op(loss). `signature_listing` reads a SavedModel's serving signatures the way
`saved_model_cli show --all` lists them, from the proto, under either TensorFlow.
"""

import os

import keras
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

FEATURES = 4
CLASSES = 3
LABELS = ("cat", "dog", "fish")


def estimators_api():
    """The `api` namespace for this project (imported here, not at the top: the reference runs TF 2.15)."""
    import types

    import estimators
    import estimators.export

    return types.SimpleNamespace(
        EstimatorSpec=estimators.EstimatorSpec, ModeKeys=estimators.ModeKeys, export=estimators.export,
        Estimator=estimators.Estimator,
        train_op=lambda loss: estimators.CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss),
    )


def dataset(n=16, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, FEATURES).astype("float32")
    return x, np.argmax(x[:, :CLASSES], axis=1).astype("int32")


def train_input_fn():
    x, y = dataset()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8, drop_remainder=True)


def make_model_fn(api, heads):
    """A softmax regression whose PREDICT spec carries `heads(logits, probabilities, api)` as export_outputs."""

    def model_fn(features, labels, mode):
        x = features["x"] if isinstance(features, dict) else features
        logits = keras.layers.Dense(CLASSES, kernel_initializer=keras.initializers.GlorotUniform(seed=1))(x)
        if isinstance(features, dict) and "w" in features:
            logits = logits * features["w"][:, None]
        if mode == api.ModeKeys.PREDICT:
            probabilities = tf.nn.softmax(logits)
            predictions = {"logits": logits, "classes": tf.argmax(logits, 1)}
            return api.EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=heads(logits, probabilities, api))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        return api.EstimatorSpec(mode, loss=loss, train_op=api.train_op(loss))

    return model_fn


def _label_names(probabilities):
    batch = tf.shape(probabilities)[0]
    return tf.tile(tf.constant([LABELS]), tf.stack([batch, 1]))


def _parsing(api):
    return api.export.build_parsing_serving_input_receiver_fn({"x": tf.io.FixedLenFeature([FEATURES], tf.float32)})


def _no_heads(logits, probabilities, api):
    return None


def _classify_regress_predict(logits, probabilities, api):
    return {
        "serving_default": api.export.ClassificationOutput(scores=probabilities, classes=_label_names(probabilities)),
        "regression": api.export.RegressionOutput(value=tf.reduce_max(probabilities, axis=1)),
        "predict": api.export.PredictOutput({"probabilities": probabilities, "class_ids": tf.argmax(logits, 1)}),
    }


def _one_custom_head(logits, probabilities, api):
    return {"custom": api.export.PredictOutput(logits)}


def _predict_and_classify(logits, probabilities, api):
    return {
        "serving_default": api.export.PredictOutput({"probabilities": probabilities}),
        "classify": api.export.ClassificationOutput(scores=probabilities),
    }


def _classify_default_and_predict(logits, probabilities, api):
    return {
        "serving_default": api.export.ClassificationOutput(scores=probabilities),
        "predict": api.export.PredictOutput({"logits": logits}),
    }


def _multi_head(logits, probabilities, api):
    return {"serving_default": api.export.PredictOutput({("head_a", "logits"): logits,
                                                         ("head_b", "probabilities"): probabilities})}


def _raw_dict(api):
    return api.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, FEATURES])})


def _raw_two_features_fixed_batch(api):
    return api.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, FEATURES]), "w": tf.ones([1])},
                                                          default_batch_size=8)


def _tensor_receiver(api):
    def receiver_fn():
        grid = tf.compat.v1.placeholder(tf.float32, [None, 2, 2], name="grid")
        return api.export.TensorServingInputReceiver(tf.reshape(grid, [-1, FEATURES]), grid)

    return receiver_fn


def _alternatives(api):
    def receiver_fn():
        examples = tf.compat.v1.placeholder(tf.string, [None], name="input_example_tensor")
        features = tf.io.parse_example(examples, {"x": tf.io.FixedLenFeature([FEATURES], tf.float32)})
        return api.export.ServingInputReceiver(features, {"examples": examples},
                                               receiver_tensors_alternatives={"raw": {"x": features["x"]}})

    return receiver_fn


# name -> (receiver fn builder, export heads)
CASES = {
    "raw_dict_default_head": (_raw_dict, _no_heads),
    "raw_two_features_fixed_batch": (_raw_two_features_fixed_batch, _one_custom_head),
    "parsing_classify_regress_predict": (_parsing, _classify_regress_predict),
    "raw_unservable_classify_left_out": (_raw_dict, _predict_and_classify),
    "tensor_receiver_default_head": (_tensor_receiver, _no_heads),
    "alternatives": (_alternatives, _classify_default_and_predict),
    "multi_head_tuple_keys": (_raw_dict, _multi_head),
}


def export_case(api, name, model_dir, export_base):
    """Trains the case's model_fn one step and exports it; returns the export folder (str)."""
    receiver, heads = CASES[name]
    estimator = api.Estimator(make_model_fn(api, heads), model_dir=model_dir)
    estimator.train(train_input_fn, max_steps=1)
    path = estimator.export_saved_model(export_base, receiver(api))
    return path.decode() if isinstance(path, bytes) else path


def _tensor_info(info):
    """'float32[-1,4]' (-1: any size; '[?]': any rank), as saved_model_cli shows dtype and shape."""
    shape = "?" if info.tensor_shape.unknown_rank else ",".join(str(d.size) for d in info.tensor_shape.dim)
    return f"{tf.as_dtype(info.dtype).name}[{shape}]"


def signature_listing(export_dir):
    """{signature: {"method", "inputs": {name: "dtype[shape]"}, "outputs": ...}} of the "serve" meta graph."""
    proto = saved_model_pb2.SavedModel()
    path = os.path.join(export_dir, "saved_model.pb")
    if os.path.exists(path):
        with open(path, "rb") as f:
            proto.ParseFromString(f.read())
    else:
        from google.protobuf import text_format

        with open(os.path.join(export_dir, "saved_model.pbtxt")) as f:
            text_format.Parse(f.read(), proto)
    (meta_graph,) = [g for g in proto.meta_graphs if list(g.meta_info_def.tags) == ["serve"]]
    listing = {}
    for name, signature in meta_graph.signature_def.items():
        if name.startswith("__"):  # TF2's internal __saved_model_init_op
            continue
        listing[name] = {
            "method": signature.method_name,
            "inputs": {k: _tensor_info(v) for k, v in sorted(signature.inputs.items())},
            "outputs": {k: _tensor_info(v) for k, v in sorted(signature.outputs.items())},
        }
    return dict(sorted(listing.items()))
