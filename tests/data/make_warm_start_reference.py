"""Records what tf.estimator 2.15 warm-starts, for tests/test_warm_start_selection.py to compare against.

Run with the real TF 2.15 + tensorflow-estimator 2.15 (the project itself never imports them):
    /work/ref215/bin/python tests/data/make_warm_start_reference.py > tests/data/warm_start_reference_tf215.json

A TF1 graph (dense -> batch norm -> dense, Adam, global_step) is saved with every variable set to a distinct
tag value; each case warm-starts a fresh graph with tf.compat.v1.train.warm_start (what Estimator.train
calls) and records, per variable, which checkpoint tensor its value came from. One case goes through a
real tf.estimator.Estimator.predict(warm_start_from=directory).
"""

import json
import os
import sys
import tempfile
from importlib import metadata

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1
EXTRA = {"old/bias": ([2], 500.0), "shared": ([2], 600.0)}  # checkpoint-only tensors for the rename cases

CASES = {
    "default": {},
    "none": {"vars_to_warm_start": None},
    "empty_string": {"vars_to_warm_start": ""},
    "scope_with_slash": {"vars_to_warm_start": "dense/"},
    "prefix_matches_dense_1_too": {"vars_to_warm_start": "dense"},
    "dollar_never_matches": {"vars_to_warm_start": "dense/kernel$"},
    "colon_zero_dollar": {"vars_to_warm_start": "dense/kernel:0$"},
    "string_skips_non_trainable": {"vars_to_warm_start": ".*moving"},
    "match_is_anchored_at_start": {"vars_to_warm_start": "kernel"},
    "case_sensitive": {"vars_to_warm_start": "Dense"},
    "list_moving_mean": {"vars_to_warm_start": ["batch_normalization/moving_mean"]},
    "list_everything": {"vars_to_warm_start": [".*"]},
    "list_empty": {"vars_to_warm_start": []},
    "list_two_patterns": {"vars_to_warm_start": ["dense/kernel", "batch_normalization/moving"]},
    "list_adam_slots": {"vars_to_warm_start": ["dense/kernel/Adam"]},
    "list_global_step": {"vars_to_warm_start": ["global"]},
    "list_same_variable_twice": {"vars_to_warm_start": ["dense/kernel", "dense/kernel"]},
    "list_overlapping_patterns": {"vars_to_warm_start": ["dense/", "dense/kernel"]},
    "list_mixed_types": {"vars_to_warm_start": ["dense/kernel", 3]},
    "not_str_or_list": {"vars_to_warm_start": 5},
    "rename": {"vars_to_warm_start": "dense/", "var_name_to_prev_var_name": {"dense/bias": "old/bias"}},
    "rename_not_selected": {"vars_to_warm_start": "dense/", "var_name_to_prev_var_name": {"dense_1/bias": "old/bias"}},
    "rename_with_none_selects_nothing": {"vars_to_warm_start": None,
                                         "var_name_to_prev_var_name": {"dense/bias": "old/bias"}},
    "rename_to_empty_name": {"var_name_to_prev_var_name": {"dense/bias": ""}},
    "rename_two_from_one_tensor": {"var_name_to_prev_var_name": {"dense/bias": "shared", "dense_1/bias": "shared"}},
    "rename_to_missing_tensor": {"var_name_to_prev_var_name": {"dense/bias": "nope/bias"}},
    "rename_to_other_shape": {"var_name_to_prev_var_name": {"dense/bias": "dense/kernel"}},
    "rename_non_trainable_by_default": {"var_name_to_prev_var_name": {"batch_normalization/moving_mean": "old/bias"}},
}


def build(training=True):
    x = v1.placeholder(tf.float32, [None, 3])
    global_step = v1.train.get_or_create_global_step()
    h = v1.layers.dense(x, 2, name="dense")
    h = v1.layers.batch_normalization(h, training=training, name="batch_normalization")
    y = v1.layers.dense(h, 2, name="dense_1")
    if training:
        v1.train.AdamOptimizer().minimize(tf.reduce_mean(y), global_step=global_step)


def first_values(session):
    return {v.op.name: float(np.ravel(session.run(v))[0]) for v in v1.global_variables()}


def origin(value, tags):
    """The checkpoint tensor a value came from (tags are distinct and >= 2), or None for a fresh value."""
    names = [name for name, tag in tags.items() if tag == value]
    return names[0] if value >= 2 and len(names) == 1 else None


def main():
    source = tempfile.mkdtemp(prefix="warm_start_source_")
    with tf.Graph().as_default():
        build()
        for name, (shape, value) in EXTRA.items():
            v1.get_variable(name, initializer=np.full(shape, value, np.float32))
        model = [v for v in v1.global_variables() if v.op.name not in EXTRA]
        variables = [{"name": v.op.name, "shape": v.shape.as_list(), "dtype": v.dtype.base_dtype.name,
                      "trainable": v in v1.trainable_variables()} for v in model]
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            for i, v in enumerate(model):
                session.run(v.assign(tf.cast(tf.fill(v.shape, float(i + 2)), v.dtype.base_dtype)))
            v1.train.Saver().save(session, os.path.join(source, "model.ckpt"), global_step=0)
    reader = tf.train.load_checkpoint(source)
    tags = {name: float(np.ravel(reader.get_tensor(name))[0]) for name in reader.get_variable_to_shape_map()}
    checkpoint = {name: {"shape": shape, "dtype": reader.get_variable_to_dtype_map()[name].name, "tag": tags[name]}
                  for name, shape in sorted(reader.get_variable_to_shape_map().items())}

    cases = {}
    for case, kwargs in CASES.items():
        with tf.Graph().as_default():
            build()
            try:
                v1.train.warm_start(source, **kwargs)
                with v1.Session() as session:
                    session.run(v1.global_variables_initializer())
                    values = first_values(session)
                cases[case] = {"settings": kwargs,
                               "warm_started": {n: origin(val, tags) for n, val in values.items() if origin(val, tags)}}
            except (ValueError, TypeError) as err:
                message = str(err).replace(source, "<source>")[:160]
                cases[case] = {"settings": kwargs, "error": f"{type(err).__name__}: {message}"}

    import tensorflow_estimator  # noqa: F401 - the real tf.estimator 2.15, for the end-to-end case

    def model_fn(features, labels, mode):
        build(training=False)
        predictions = {v.op.name.replace("/", "__"): tf.fill(tf.shape(features["x"])[:1], tf.cast(
            tf.reshape(v, [-1])[0], tf.float32)) for v in v1.global_variables()}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)

    estimator = tf.estimator.Estimator(model_fn, model_dir=tempfile.mkdtemp(prefix="warm_start_empty_"),
                                       warm_start_from=source)
    row = next(estimator.predict(lambda: tf.data.Dataset.from_tensors({"x": np.zeros([1, 3], np.float32)})))
    predicted = {name.replace("__", "/"): float(value) for name, value in row.items()}
    cases["estimator_predict_warm_start_from_directory"] = {
        "settings": {}, "variables": sorted(predicted),
        "warm_started": {n: origin(val, tags) for n, val in predicted.items() if origin(val, tags)},
        "not_warm_started": sorted(n for n, val in predicted.items() if not origin(val, tags))}

    versions = {"tensorflow": tf.__version__, "tensorflow_estimator": metadata.version("tensorflow-estimator")}
    json.dump({**versions, "variables": variables, "checkpoint": checkpoint, "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
