"""model_to_estimator rebuilds a model's Lambda layers (Python lambdas included), as 2.15's clone of it did."""

import keras
import numpy as np
import tensorflow as tf

from estimators.keras.model import model_to_estimator


def test_a_model_with_a_python_lambda_layer_predicts_as_the_model(tmp_path):
    keras.utils.set_random_seed(0)
    inputs = keras.Input((3,), name="x")
    outputs = keras.layers.Dense(2, name="dense")(keras.layers.Lambda(lambda t: t * 2.0, name="double")(inputs))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.RandomState(0).randn(4, 3).astype("float32")
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    predictions = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(4)))
    np.testing.assert_allclose(np.stack([p["dense"] for p in predictions]), model.predict(x, verbose=0), rtol=1e-5)
