"""Writes tests/reference/canned_dnn_215.json: what tf.estimator 2.15's DNN and DNN-linear-combined estimators
computed for small fixed programs (every trained variable with its optimizer slots and batch-norm statistics, the
layers' fraction_of_zero_values summaries, evaluation, predictions). tests/test_canned_dnn_215.py runs the same
programs (PROGRAMS below, imported from this file) on `estimators`.

Each program warm-starts from a checkpoint of fixed weights (the kernels' glorot draws differ between graphs), so
what it computes depends only on the estimator's arithmetic.
Run on TF 2.15: /work/venv215/bin/python tests/reference/make_canned_dnn_215.py
"""

import glob
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "canned_dnn_215.json")
fc = tf.feature_column
STEPS = 5
EMBEDDING = "dnn/input_from_feature_columns/input_layer/lang_embedding/embedding_weights"


def _input_fn(labels=(0, 1, 2, 1), regression: bool = False, label_dimension: int = 1):
    """Four fixed examples: 'age', a multivalent 'lang' (vocabulary a, b, c), 'w' weights."""
    def fn():
        features = {
            "age": tf.constant([[1.0], [2.0], [-1.5], [0.5]]),
            "lang": tf.sparse.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0]],
                                           values=["a", "c", "b", "c", "a", "b"], dense_shape=[4, 2]),
            "w": tf.constant([[1.0], [2.0], [0.5], [1.5]]),
        }
        if regression:
            targets = [[1.0, -0.5], [3.0, 0.0], [-2.0, 1.0], [0.5, 2.0]]
            return features, tf.constant([row[:label_dimension] for row in targets])
        return features, tf.constant([[label] for label in labels])
    return fn


def _lang():
    return fc.categorical_column_with_vocabulary_list("lang", ["a", "b", "c"])


def _dnn_columns():
    """Input width 3: age (1) and lang's mean embedding (2)."""
    return [fc.numeric_column("age"), fc.embedding_column(_lang(), dimension=2)]


def _dnn_shapes(hidden_units, units: int, batch_norm: bool, input_units: int = 3) -> dict:
    """{name: shape} of a DNN's trainable variables, 2.15's names."""
    shapes = {EMBEDDING: (3, 2)}
    previous = input_units
    for i, width in enumerate(hidden_units):
        shapes[f"dnn/hiddenlayer_{i}/kernel"] = (previous, width)
        shapes[f"dnn/hiddenlayer_{i}/bias"] = (width,)
        if batch_norm:
            shapes[f"dnn/hiddenlayer_{i}/batchnorm_{i}/gamma"] = (width,)
            shapes[f"dnn/hiddenlayer_{i}/batchnorm_{i}/beta"] = (width,)
        previous = width
    shapes["dnn/logits/kernel"] = (previous, units)
    shapes["dnn/logits/bias"] = (units,)
    return shapes


def _fixed(name: str, shape) -> np.ndarray:
    """Deterministic values for a variable: a sine over its entries, phase from its name (gammas near 1)."""
    size = int(np.prod(shape))
    values = 0.6 * np.sin(np.arange(size) * 1.7 + sum(map(ord, name)) % 7)
    if name.endswith("/gamma"):
        values = 1.0 + 0.2 * values
    return values.reshape(shape).astype(np.float32)


def _checkpoint(shapes: dict) -> str:
    """A checkpoint holding _fixed values of `shapes`, to warm-start from."""
    ckpt_dir = tempfile.mkdtemp()
    with tf.Graph().as_default():
        for name, shape in shapes.items():
            tf.Variable(_fixed(name, shape), name=name)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.train.Saver().save(sess, os.path.join(ckpt_dir, "model.ckpt"))
    return ckpt_dir


def _summaries(model_dir: str) -> dict:
    """{tag: {step: value}} of the scalar fraction_of_zero_values summaries in model_dir."""
    summaries: dict = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag.endswith("fraction_of_zero_values") and value.HasField("simple_value"):
                    summaries.setdefault(value.tag, {})[str(event.step)] = value.simple_value
    return summaries


def _program(lib, make, shapes: dict, input_fn) -> dict:
    """Warm-start from _fixed weights, train STEPS steps (a summary each), then report every variable, the
    summaries, evaluation and the first prediction."""
    model_dir = tempfile.mkdtemp()
    est = make(model_dir, lib.RunConfig(tf_random_seed=1, save_summary_steps=1), _checkpoint(shapes))
    est.train(input_fn, steps=STEPS)
    result = {"variables": {name: np.asarray(est.get_variable_value(name)).tolist()
                            for name in est.get_variable_names()}}
    result["summaries"] = _summaries(model_dir)
    metrics = est.evaluate(input_fn, steps=1)
    result["evaluate"] = {k: float(v) for k, v in sorted(metrics.items())}
    prediction = next(iter(est.predict(lambda: input_fn()[0])))
    result["predict"] = {k: np.asarray(v).tolist() for k, v in sorted(prediction.items())
                         if np.asarray(v).dtype.kind not in "OSU"}
    return result


def classifier_batch_norm(lib):
    """3 classes, hidden (3, 2) with batch norm, default 'Adagrad' (0.001), weights 'w': the moving statistics,
    the Adagrad accumulators and the layers' fraction of zeros."""
    return _program(
        lib, lambda d, c, w: lib.DNNClassifier([3, 2], _dnn_columns(), model_dir=d, config=c, n_classes=3,
                                               weight_column="w", batch_norm=True, warm_start_from=w),
        _dnn_shapes([3, 2], 3, batch_norm=True), _input_fn())


def binary_classifier_sgd(lib):
    """2 classes, hidden (4,), 'SGD' (0.01, Keras' default) and a label vocabulary."""
    return _program(
        lib, lambda d, c, w: lib.DNNClassifier([4], _dnn_columns(), model_dir=d, config=c, optimizer="SGD",
                                               label_vocabulary=["no", "yes"], warm_start_from=w),
        _dnn_shapes([4], 1, batch_norm=False), _input_fn(labels=("no", "yes", "yes", "no")))


def regressor_adam_tanh(lib):
    """label_dimension 2, hidden (3,), tanh, 'Adam' at its default 0.001."""
    return _program(
        lib, lambda d, c, w: lib.DNNRegressor([3], _dnn_columns(), model_dir=d, config=c, label_dimension=2,
                                              optimizer="Adam", activation_fn=tf.nn.tanh, warm_start_from=w),
        _dnn_shapes([3], 2, batch_norm=False), _input_fn(regression=True, label_dimension=2))


def combined_classifier(lib):
    """Wide & deep binary classifier: Ftrl (0.005 for 2 columns) on the linear part, Adagrad on the DNN."""
    shapes = {**_dnn_shapes([3], 1, batch_norm=False), "linear/linear_model/age/weights": (1, 1),
              "linear/linear_model/lang/weights": (3, 1), "linear/linear_model/bias_weights": (1,)}
    return _program(
        lib, lambda d, c, w: lib.DNNLinearCombinedClassifier(
            d, linear_feature_columns=[fc.numeric_column("age"), _lang()], dnn_feature_columns=_dnn_columns(),
            dnn_hidden_units=[3], config=c, warm_start_from=w),
        shapes, _input_fn(labels=(0, 1, 1, 0)))


def combined_regressor_batch_norm(lib):
    """Wide & deep regressor with batch norm on the DNN, 'SGD' for both parts."""
    shapes = {**_dnn_shapes([2], 1, batch_norm=True), "linear/linear_model/lang/weights": (3, 1),
              "linear/linear_model/bias_weights": (1,)}
    return _program(
        lib, lambda d, c, w: lib.DNNLinearCombinedRegressor(
            d, linear_feature_columns=[_lang()], linear_optimizer="SGD", dnn_feature_columns=_dnn_columns(),
            dnn_optimizer="SGD", dnn_hidden_units=[2], batch_norm=True, config=c, warm_start_from=w),
        shapes, _input_fn(regression=True))


PROGRAMS = {f.__name__: f for f in (classifier_batch_norm, binary_classifier_sgd, regressor_adam_tanh,
                                    combined_classifier, combined_regressor_batch_norm)}


def main() -> None:
    reference = {"tensorflow": tf.__version__, "programs": {}}
    for name, program in PROGRAMS.items():
        reference["programs"][name] = program(tf.estimator)
    with open(OUT, "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
