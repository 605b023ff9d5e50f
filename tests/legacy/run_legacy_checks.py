"""Runs TF1 / Keras 2 model_fns on the engine with tf_keras (TF_USE_LEGACY_KERAS=1) and prints a JSON report.

Run in a subprocess by tests/test_legacy_keras.py: TF_USE_LEGACY_KERAS must be set before TensorFlow is
imported. Usage: python run_legacy_checks.py WORK_DIR
"""

import json
import os
import sys

os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 8)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tf215")
sys.path.insert(0, ROOT)
sys.path.insert(0, FIXTURES)

import models_ported  # noqa: E402

import estimators  # noqa: E402

REFERENCE = np.load(os.path.join(FIXTURES, "reference.npz"))
# Fixture a calls Sequential.get_updates_for, which tf_keras 2.21 no longer has.
FIXTURES_RUN = ["b_tpu_layers_momentum", "c_keras_functional_adagrad", "d_get_variable_rmsprop_centered",
                "d2_get_variable_rmsprop", "e_keras_legacy_adam", "e2_keras_legacy_adam_global_step", "f_layers_sgd_l2"]


def _values(model_dir):
    path = tf.train.latest_checkpoint(model_dir)
    return {name: tf.train.load_variable(path, name) for name, _ in tf.train.list_variables(path)}


def fixture_report(name, work):
    """2.15's model_fn trained 20 steps as 2.15 did (graph seed 215): names, values, evaluate, predict."""
    spec = models_ported.MODELS[name]
    tf.random.set_seed(models_ported.TF_RANDOM_SEED)  # what RunConfig(tf_random_seed=215) did in 2.15
    estimator = models_ported.make_estimator(name, os.path.join(work, name))
    estimator.train(spec["train_input_fn"], max_steps=20)
    values = _values(estimator.model_dir)
    diffs = {n: float(np.max(np.abs(v - REFERENCE[f"{name}/step20/{n}"]))) for n, v in values.items()
             if f"{name}/step20/{n}" in REFERENCE}
    results = estimator.evaluate(spec["eval_input_fn"])
    predictions = list(estimator.predict(spec["predict_input_fn"]))
    return {"names": sorted(values), "max_diff": diffs,
            "evaluate": {k: float(v) for k, v in results.items()}, "predictions": len(predictions)}


def batch_norm_report(work):
    """tf.compat.v1.layers.batch_normalization: UPDATE_OPS move the statistics in TRAIN, never in EVAL/PREDICT."""
    name = "b_tpu_layers_momentum"
    spec = models_ported.MODELS[name]
    estimator = models_ported.make_estimator(name, os.path.join(work, "bn"))
    estimator.train(spec["train_input_fn"], max_steps=10)
    (runtime,) = estimator._runtimes.values()
    stored = runtime.store.variables()
    read = lambda: {n: np.array(stored[n].numpy()) for n in  # noqa: E731
                    ("batch_normalization/moving_mean", "batch_normalization/moving_variance")}
    trained = read()
    estimator.evaluate(spec["eval_input_fn"])
    list(estimator.predict(spec["predict_input_fn"]))
    after = read()
    return {"moved_in_train": bool(np.abs(trained["batch_normalization/moving_mean"]).max() > 0),
            "unchanged_by_eval_and_predict": all(np.array_equal(trained[n], after[n]) for n in trained),
            "kinds": {e.name: e.kind for e in runtime.store.entries() if "batch_normalization" in e.name}}


def replicas_report(work, strategy):
    """get_variable / variable_scope model_fn (fixture d) under 8 replicas, each taking its own batch of 2 from
    input_fn as in tf.estimator: same training as 1 replica on the batches of 16 those 8 make."""
    name = "d_get_variable_rmsprop_centered"
    spec = models_ported.MODELS[name]
    per_replica = models_ported.BATCH_SIZE // 8
    out = {}
    for label, distribute in (("one", None), ("eight", strategy)):
        tf.random.set_seed(models_ported.TF_RANDOM_SEED)
        config = estimators.RunConfig(model_dir=os.path.join(work, f"replicas_{label}"), train_distribute=distribute)
        estimator = estimators.Estimator(spec["model_fn"], config=config, params=dict(spec["params"]))
        train_input_fn = spec["train_input_fn"] if distribute is None else (
            lambda: spec["train_input_fn"]().unbatch().batch(per_replica))
        estimator.train(train_input_fn, max_steps=12)
        out[label] = {"values": {k: v.tolist() for k, v in _values(estimator.model_dir).items()},
                      "evaluate": {k: float(v) for k, v in estimator.evaluate(spec["eval_input_fn"]).items()},
                      "predictions": len(list(estimator.predict(spec["predict_input_fn"])))}
    return out


def tf_keras_model_fn(features, labels, mode, params):
    """tf_keras Sequential + tf_keras optimizers (new and legacy) + a tf_keras metric and a v1 pair in metric_fn."""
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", kernel_initializer=tf.keras.initializers.GlorotUniform(1)),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.Dense(3, kernel_initializer=tf.keras.initializers.GlorotUniform(2)),
    ])
    logits = model(features, training=mode == estimators.ModeKeys.TRAIN)
    if mode == estimators.ModeKeys.PREDICT:
        return estimators.TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == estimators.ModeKeys.TRAIN:
        optimizer = (tf.keras.optimizers.legacy.SGD(0.1, momentum=0.5) if params["legacy_optimizer"]
                     else tf.keras.optimizers.SGD(0.1, momentum=0.5))
        train_op = estimators.CrossShardOptimizer(optimizer).minimize(loss, var_list=model.trainable_variables)
        return estimators.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def metric_fn(labels, logits):
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
        accuracy.update_state(labels, logits)
        return {"keras_accuracy": accuracy, "v1_accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))}

    return estimators.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))


def tf_keras_report(work, strategy):
    (train_x, train_y), (eval_x, eval_y) = models_ported.make_data()
    eval_x, eval_y = eval_x[:45], eval_y[:45]  # a partial last batch
    out = {}
    for legacy in (True, False):
        config = estimators.RunConfig(model_dir=os.path.join(work, f"tf_keras_{legacy}"), train_distribute=strategy,
                                      tpu_config=estimators.TPUConfig(iterations_per_loop=4))
        estimator = estimators.TPUEstimator(
            tf_keras_model_fn, config=config, params={"legacy_optimizer": legacy}, use_tpu=False,
            train_batch_size=16, eval_batch_size=16, predict_batch_size=16)
        estimator.train(lambda params: tf.data.Dataset.from_tensor_slices((train_x, train_y)).repeat().batch(
            params["batch_size"], drop_remainder=True), max_steps=8)
        results = estimator.evaluate(lambda params: tf.data.Dataset.from_tensor_slices((eval_x, eval_y)).batch(
            params["batch_size"]))
        logits = np.stack([p["logits"] for p in estimator.predict(
            lambda params: tf.data.Dataset.from_tensor_slices(eval_x).batch(params["batch_size"]))])
        (runtime,) = estimator._runtimes.values()
        out["legacy" if legacy else "new"] = {
            "evaluate": {k: float(v) for k, v in results.items()},
            "numpy_accuracy": float(np.mean(logits.argmax(1) == eval_y)),
            "names": sorted(_values(estimator.model_dir)),
            "kinds": {e.name: e.kind for e in runtime.store.entries()},
        }
    return out


def main():
    work = sys.argv[1]
    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(8)])
    report = {"tf_keras": tf.keras.__name__ if hasattr(tf.keras, "__name__") else str(tf.keras)}
    report["fixtures"] = {name: fixture_report(name, work) for name in FIXTURES_RUN}
    report["batch_norm"] = batch_norm_report(work)
    report["replicas"] = replicas_report(work, strategy)
    report["tf_keras_models"] = tf_keras_report(work, strategy)
    print("REPORT " + json.dumps(report))


if __name__ == "__main__":
    main()
