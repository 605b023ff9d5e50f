"""The SavedModel writer: tf.estimator's export_saved_model arguments, and never half an export."""

import os

import numpy as np
import pytest
import tensorflow as tf

from estimators import ModeKeys
from estimators.export import build_parsing_serving_input_receiver_fn, build_raw_serving_input_receiver_fn
from estimators.tf2.saved_model import export_saved_model
from tests import export_cases as cases

RECEIVER = build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, cases.FEATURES])})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    api = cases.estimators_api()
    estimator = api.Estimator(cases.make_model_fn(api, cases._no_heads), model_dir=str(tmp_path_factory.mktemp("m")))
    return estimator.train(cases.train_input_fn, max_steps=1)


def _export(estimator, base, receiver_fn=RECEIVER, checkpoint_path=None, **kwargs):
    path = checkpoint_path or estimator.latest_checkpoint()
    return export_saved_model(estimator.model_fn, estimator.params, estimator.config, path, str(base), receiver_fn,
                              **kwargs).decode()


def _served_logits(export_dir, x):
    return tf.saved_model.load(export_dir).signatures["serving_default"](x=tf.constant(x))["logits"].numpy()


def _predicted_logits(estimator, x, checkpoint_path=None):
    return np.stack([p["logits"] for p in estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(8), checkpoint_path=checkpoint_path)])


def test_export_is_a_ten_digit_version_folder_holding_a_binary_saved_model(trained, tmp_path):
    export_dir = _export(trained, tmp_path)
    name = os.path.basename(export_dir)
    assert len(name) == 10 and name.isdigit()
    assert {"saved_model.pb", "variables"} <= set(os.listdir(export_dir))


def test_exports_in_the_same_second_get_increasing_versions(trained, tmp_path):
    first, second = _export(trained, tmp_path), _export(trained, tmp_path)
    assert int(os.path.basename(second)) > int(os.path.basename(first))
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(first), os.path.basename(second)])


def test_as_text_writes_saved_model_pbtxt_that_tf_loads(trained, tmp_path):
    export_dir = _export(trained, tmp_path, as_text=True)
    files = set(os.listdir(export_dir))
    assert "saved_model.pbtxt" in files and "saved_model.pb" not in files
    x = cases.dataset(4, seed=1)[0]
    np.testing.assert_allclose(_served_logits(export_dir, x), _predicted_logits(trained, x), rtol=1e-5, atol=1e-6)


def test_assets_extra_are_copied_under_assets_extra(trained, tmp_path):
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("cat\ndog\n")
    export_dir = _export(trained, tmp_path / "export", assets_extra={"lookup/vocab.txt": str(vocabulary)})
    with open(os.path.join(export_dir, "assets.extra", "lookup", "vocab.txt")) as f:
        assert f.read() == "cat\ndog\n"


def test_checkpoint_path_exports_that_checkpoints_weights(tmp_path):
    api = cases.estimators_api()
    estimator = api.Estimator(cases.make_model_fn(api, cases._no_heads), model_dir=str(tmp_path / "m"))
    first = estimator.train(cases.train_input_fn, max_steps=1).latest_checkpoint()
    estimator.train(cases.train_input_fn, max_steps=3)
    x = cases.dataset(4, seed=1)[0]
    served = _served_logits(_export(estimator, tmp_path / "e", checkpoint_path=first), x)
    np.testing.assert_allclose(served, _predicted_logits(estimator, x, checkpoint_path=first), rtol=1e-5, atol=1e-6)
    assert not np.allclose(served, _predicted_logits(estimator, x), atol=1e-4)


def test_classify_signatures_keep_a_readable_fingerprint(trained, tmp_path):
    receiver_fn = build_parsing_serving_input_receiver_fn({"x": tf.io.FixedLenFeature([4], tf.float32)})
    api = cases.estimators_api()
    estimator = api.Estimator(cases.make_model_fn(api, cases._classify_regress_predict), model_dir=trained.model_dir)
    export_dir = _export(estimator, tmp_path, receiver_fn)
    assert tf.saved_model.experimental.read_fingerprint(export_dir).saved_model_checksum != 0


def test_only_predict_mode_exports(trained, tmp_path):
    with pytest.raises(ValueError, match="experimental_mode='train' is not supported: only ModeKeys.PREDICT"):
        _export(trained, tmp_path, experimental_mode=ModeKeys.TRAIN)
    assert os.listdir(tmp_path) == []


def test_a_missing_receiver_fn_is_named(trained, tmp_path):
    with pytest.raises(ValueError, match="serving_input_receiver_fn must be given"):
        _export(trained, tmp_path, receiver_fn=None)


def test_a_checkpoint_of_another_model_leaves_no_export_behind(trained, tmp_path):
    def bigger_model_fn(features, labels, mode):
        import keras

        logits = keras.layers.Dense(7)(features["x"])
        return cases.estimators_api().EstimatorSpec(mode, predictions={"logits": logits})

    with pytest.raises(ValueError):  # the engine's restore error names the mismatch
        export_saved_model(bigger_model_fn, {}, trained.config, trained.latest_checkpoint(), str(tmp_path), RECEIVER)
    assert not os.path.exists(tmp_path) or os.listdir(tmp_path) == []
