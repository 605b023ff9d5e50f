"""Writes tests/reference/canned_linear_215.json: what tf.estimator 2.15's linear estimators computed for small
fixed programs (trained weights, Ftrl slots, the `bias` / `fraction_of_zero_weights` summaries, evaluation,
predictions) and what its _compute_fraction_of_zero gave. tests/test_canned_linear_215.py runs the same
programs (PROGRAMS below, imported from this file) on `estimators`.

Run on TF 2.15: /work/venv215/bin/python tests/reference/make_canned_linear_215.py
"""

import glob
import json
import math
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "canned_linear_215.json")
fc = tf.feature_column


def _input_fn(n_columns: int = 0, labels=(0, 1, 2, 1), regression: bool = False):
    """Four fixed examples: 'age', a multivalent 'lang' (vocabulary a, b, c), 'w' weights, x0.. numerics."""
    def fn():
        features = {
            "age": tf.constant([[1.0], [2.0], [-1.5], [0.5]]),
            "lang": tf.sparse.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0]],
                                           values=["a", "c", "b", "c", "a", "b"], dense_shape=[4, 2]),
            "w": tf.constant([[1.0], [2.0], [0.5], [1.5]]),
        }
        for i in range(n_columns):
            features[f"x{i}"] = tf.constant([[0.1 * i], [0.2], [-0.3 * i], [1.0]])
        if regression:
            return features, tf.constant([[1.0], [3.0], [-2.0], [0.5]])
        return features, tf.constant([[label] for label in labels])
    return fn


def _age_lang():
    return [fc.numeric_column("age"), fc.categorical_column_with_vocabulary_list("lang", ["a", "b", "c"])]


def _summaries(model_dir: str) -> dict:
    """{tag: {step: value}} of the scalar `bias` and `fraction_of_zero_weights` summaries in model_dir."""
    summaries: dict = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag in ("bias", "fraction_of_zero_weights") and value.HasField("simple_value"):
                    summaries.setdefault(value.tag, {})[str(event.step)] = value.simple_value
    return summaries


def _program(lib, make, input_fn, steps: int = 5, variables=()) -> dict:
    """Train `steps` steps, then report variables, evaluation and the first prediction."""
    model_dir = tempfile.mkdtemp()
    est = make(model_dir, lib.RunConfig(tf_random_seed=1))
    est.train(input_fn, steps=steps)
    result = {"variables": {name: np.asarray(est.get_variable_value(name)).tolist() for name in variables}}
    metrics = est.evaluate(input_fn, steps=1)
    result["evaluate"] = {k: float(v) for k, v in sorted(metrics.items())}
    prediction = next(iter(est.predict(lambda: input_fn()[0])))
    result["predict"] = {k: np.asarray(v).tolist() for k, v in sorted(prediction.items())
                         if np.asarray(v).dtype.kind not in "OSU"}
    return result


def _frozen_sgd(lib):
    """SGD at learning rate 0 as a Keras 2 optimizer (2.15's tf.keras; tf_keras beside Keras 3)."""
    if getattr(tf, "estimator", None) is lib:
        return tf.keras.optimizers.legacy.SGD(learning_rate=0.0)
    import tf_keras
    return tf_keras.optimizers.legacy.SGD(learning_rate=0.0)


def summaries_from_checkpoint(lib, n_classes: int = 0) -> dict:
    """The summaries of a model warm-started from known weights (some zero) and trained at learning rate 0, so
    the values read during a step do not depend on whether the update ran first."""
    ckpt_dir, model_dir = tempfile.mkdtemp(), tempfile.mkdtemp()
    units = n_classes if n_classes > 2 else 1
    with tf.Graph().as_default():
        tf.Variable([[0.0] * units], name="linear/linear_model/age/weights")
        tf.Variable([[1.0] * units, [0.0] * units, [2.0] * units], name="linear/linear_model/lang/weights")
        tf.Variable([0.75] * units, name="linear/linear_model/bias_weights")
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.train.Saver().save(sess, os.path.join(ckpt_dir, "model.ckpt"))
    config = lib.RunConfig(save_summary_steps=1)
    kwargs = {"model_dir": model_dir, "config": config, "optimizer": _frozen_sgd(lib), "warm_start_from": ckpt_dir}
    if n_classes:
        est = lib.LinearClassifier(_age_lang(), n_classes=n_classes, **kwargs)
        labels = tuple(i % n_classes for i in range(4))
    else:
        est = lib.LinearRegressor(_age_lang(), **kwargs)
        labels = (0, 1, 0, 1)
    est.train(_input_fn(labels=labels, regression=not n_classes), steps=2)
    return {"summaries": _summaries(model_dir)}


def summaries_regressor(lib):
    """One output: a scalar `bias` (0.75) and fraction_of_zero_weights 2 of 4."""
    return summaries_from_checkpoint(lib)


def summaries_multi_class(lib):
    """Three outputs: `bias` is a histogram (no scalar), fraction_of_zero_weights 6 of 12."""
    return summaries_from_checkpoint(lib, n_classes=3)


def regressor_ftrl(lib):
    """LinearRegressor's default 'Ftrl' (learning rate 0.2), a numeric and a multivalent categorical column."""
    return _program(lib, lambda d, c: lib.LinearRegressor(_age_lang(), model_dir=d, config=c),
                    _input_fn(regression=True),
                    variables=["linear/linear_model/age/weights", "linear/linear_model/lang/weights",
                               "linear/linear_model/bias_weights",
                               "training/Ftrl/linear/linear_model/lang/weights/accumulator"])


def regressor_default_optimizer_30_columns(lib):
    """optimizer=None: FTRL at min(0.2, 1/sqrt(30)) = 0.1826 over 30 numeric columns."""
    columns = [fc.numeric_column(f"x{i}") for i in range(30)]
    return _program(lib, lambda d, c: lib.LinearRegressor(columns, model_dir=d, config=c, optimizer=None),
                    _input_fn(n_columns=30, regression=True),
                    variables=["linear/linear_model/x1/weights", "linear/linear_model/x29/weights",
                               "linear/linear_model/bias_weights"])


def classifier_sqrtn_weighted(lib):
    """3 classes, a label vocabulary, weights 'w', sparse_combiner 'sqrtn'."""
    return _program(
        lib, lambda d, c: lib.LinearClassifier(_age_lang(), model_dir=d, config=c, n_classes=3, weight_column="w",
                                               label_vocabulary=["x", "y", "z"], sparse_combiner="sqrtn"),
        _input_fn(labels=("x", "y", "z", "y")),
        variables=["linear/linear_model/lang/weights", "linear/linear_model/bias_weights"])


def binary_classifier_mean_sgd(lib):
    """2 classes, sparse_combiner 'mean', 'SGD' at 0.2: the scalar `bias` summary."""
    return _program(
        lib, lambda d, c: lib.LinearClassifier(_age_lang(), model_dir=d, config=c, optimizer="SGD",
                                               sparse_combiner="mean"),
        _input_fn(labels=(0, 1, 1, 0)),
        variables=["linear/linear_model/age/weights", "linear/linear_model/lang/weights",
                   "linear/linear_model/bias_weights"])


PROGRAMS = {f.__name__: f for f in (regressor_ftrl, regressor_default_optimizer_30_columns,
                                    classifier_sqrtn_weighted, binary_classifier_mean_sgd, summaries_regressor,
                                    summaries_multi_class)}

# _compute_fraction_of_zero's inputs (lists of (values, dtype)) and 2.15's results ("nan" for NaN).
FRACTION_CASES = {
    "mixed": [([0, 0, 1, 1, 1], "float32"), ([0, 0, 0, 0, 1], "int32")],
    "some_empty": [([], "float32"), ([0.0], "float32"), ([1.0, 2.0, 0.0], "float64")],
    "all_empty": [([], "float32"), ([], "float32")],
    "matrix": [([[0.0, 2.0], [0.0, 0.0]], "float32"), ([7], "int64")],
}


def fraction_of_zero(fraction_fn, case: str) -> float:
    """fraction_fn (a linear module's _compute_fraction_of_zero) on FRACTION_CASES[case], as a JSON number."""
    value = float(fraction_fn([tf.constant(v, dtype=d) for v, d in FRACTION_CASES[case]]).numpy())
    return "nan" if math.isnan(value) else value


def main() -> None:
    import tensorflow_estimator  # noqa: F401  (2.15's, in this interpreter)
    from tensorflow_estimator.python.estimator.canned import linear

    reference = {"tensorflow": tf.__version__, "programs": {}, "fraction_of_zero": {}}
    for name, program in PROGRAMS.items():
        reference["programs"][name] = program(tf.estimator)
    for case in FRACTION_CASES:
        reference["fraction_of_zero"][case] = fraction_of_zero(linear._compute_fraction_of_zero, case)
    with open(OUT, "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
