"""model_to_estimator rebuilds a subclassed Keras model by its own class from get_config(), as 2.15 did."""

import keras
import numpy as np
import tensorflow as tf

from estimators.keras.model import model_to_estimator


class UnregisteredModel(keras.Model):
    """A subclassed model whose class Keras's registry does not know (defined in a test, as programs do)."""

    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = keras.layers.Dense(4, activation="relu")
        self.out = keras.layers.Dense(units, activation="softmax")

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def get_config(self):
        return {"units": self.units}


def test_an_unregistered_subclassed_model_trains_and_predicts_by_position(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(32, 3).astype("float32")
    y = keras.utils.to_categorical((x[:, 0] > 0).astype("int32"), 2)
    model = UnregisteredModel()
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, {"output_1": y})).batch(8), steps=2)
    predictions = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(8)))
    assert len(predictions) == 32 and set(predictions[0]) == {"output_1"}
    assert predictions[0]["output_1"].shape == (2,)
