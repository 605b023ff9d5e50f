"""model_to_estimator: crossentropy metrics read the logits Keras cached on softmax outputs (as model.evaluate()),
and the export_outputs argument's checks."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators.keras.errors import FormattedKeyError
from estimators.keras.model import model_to_estimator


def test_binary_crossentropy_metric_of_a_softmax_output_matches_model_evaluate(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(32, 4).astype("float32") * 3
    y = keras.utils.to_categorical(rng.randint(0, 2, 32), 2)
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((4,), name="x"), keras.layers.Dense(2, activation="softmax", name="out")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=["binary_crossentropy"])
    expected = model.evaluate(x, y, batch_size=32, verbose=0, return_dict=True)["binary_crossentropy"]
    on_probabilities = float(np.mean(keras.losses.binary_crossentropy(y, model.predict(x, verbose=0))))
    assert abs(expected - on_probabilities) > 1e-3  # the case where the cached logits matter

    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    results = estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(32), steps=1)
    assert results["binary_crossentropy"] == pytest.approx(expected, rel=1e-5)


def test_export_outputs_naming_a_missing_output_is_refused_before_checkpoint_format(tmp_path):
    model = keras.Sequential([keras.Input((4,), name="x"), keras.layers.Dense(2, name="out")])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(FormattedKeyError, match="Missed keys"):
        model_to_estimator(model, model_dir=str(tmp_path), checkpoint_format="checkpoint",
                           export_outputs={"missing": keras.layers.Dense})


def test_tensorflows_own_export_output_classes_are_taken_as_ours(tmp_path):
    from tensorflow.python.saved_model.model_utils import export_output

    from estimators.export import RegressionOutput

    model = keras.Sequential([keras.Input((4,), name="x"), keras.layers.Dense(1, name="out")])
    model.compile(optimizer="sgd", loss="mse")
    estimator = model_to_estimator(model, model_dir=str(tmp_path),
                                   export_outputs={"out": export_output.RegressionOutput})
    assert estimator._model_fn._export_outputs == {"out": RegressionOutput}
