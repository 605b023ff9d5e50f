"""What tf.keras.estimator.model_to_estimator (TF 2.15, Keras 2) computed for Keras 2 models keyed by input name.

Run with the TF 2.15 reference venv; rewrites keras2_model_to_estimator_215.json beside this file:

    /work/venv215/bin/python tests/reference/make_keras2_model_to_estimator_215.py

Each case builds a Keras 2 model the way TF1-era programs did (`Dense(..., input_shape=(4,))`, whose
input is named `dense_input`), gives it the weights of `initial_weights` (numpy, seeded: the same
numbers on both sides), and records the checkpoint's model variables after STEPS training steps
on features {'dense_input': x}, evaluate()'s results and the predictions.
tests/test_keras_model.py builds the same models with tf_keras and Keras 3 and compares.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

keras = tf.keras
BATCH, STEPS = 4, 4


def data():
    rng = np.random.RandomState(7)
    x = rng.randn(16, 4).astype("float32")
    return x, (x[:, 0] + x[:, 1] > 0).astype("int32")


def initial_weights(shapes):
    rng = np.random.RandomState(11)
    return [(rng.randn(*shape) * 0.5).astype("float32") for shape in shapes]


CASES = {  # name -> (optimizer, l2 on the first kernel)
    "sequential_input_shape_sgd_l2": (lambda: keras.optimizers.SGD(0.1), 0.01),
    "sequential_input_shape_adam": (lambda: keras.optimizers.Adam(0.05), None),
}


def build(optimizer, l2):
    keras.backend.clear_session()
    regularizer = keras.regularizers.l2(l2) if l2 else None
    model = keras.Sequential([
        keras.layers.Dense(3, activation="relu", input_shape=(4,), kernel_regularizer=regularizer),
        keras.layers.Dense(2),
    ])
    model.set_weights(initial_weights([w.shape for w in model.get_weights()]))
    model.compile(optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def main():
    x, y = data()
    out = {}
    for name, (optimizer, l2) in CASES.items():
        model = build(optimizer(), l2)
        est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=tempfile.mkdtemp(),
                                                    checkpoint_format="saver")
        est.train(lambda: tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(BATCH), steps=STEPS)
        results = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(8))
        predictions = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"dense_input": x[:5]}).batch(5)))
        out[name] = {
            "input_names": model.input_names,
            "model_variables": {n: est.get_variable_value(n).tolist() for n in est.get_variable_names()
                                if not n.startswith("training/") and n != "global_step"},
            "evaluate": {k: float(v) for k, v in results.items()},
            "prediction_keys": sorted(predictions[0]),
            "predictions": [p["dense_1"].tolist() for p in predictions],
        }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras2_model_to_estimator_215.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
