"""export_saved_model: a complete SavedModel or none, that serves what predict() returns."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from estimators import RunConfig, TPUEstimator
from estimators.export import TensorServingInputReceiver
from tests import engine_models as m


@pytest.fixture
def trained(tmp_path):
    x, y = m.dataset(64)
    estimator = TPUEstimator(m.linear_model_fn, config=RunConfig(model_dir=str(tmp_path / "model")), use_tpu=False,
                             train_batch_size=16, predict_batch_size=16)
    return estimator.train(m.train_input_fn(x, y), max_steps=5)


def _receiver():
    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, m.FEATURES])
        return TensorServingInputReceiver(x, {"x": x})

    return receiver_fn


def test_export_serves_the_same_predictions_in_a_process_without_the_project(trained, tmp_path):
    x, _ = m.dataset(20, seed=3)
    export_dir = trained.export_saved_model(str(tmp_path / "export"), _receiver()).decode()
    expected = np.stack([p["logits"] for p in trained.predict(m.predict_input_fn(x))])
    np.save(tmp_path / "x.npy", x)
    script = (
        "import sys, numpy as np, tensorflow as tf\n"
        "assert 'estimators' not in sys.modules\n"
        f"f = tf.saved_model.load({export_dir!r}).signatures['serving_default']\n"
        f"out = f(x=tf.constant(np.load({str(tmp_path / 'x.npy')!r})))\n"
        f"np.save({str(tmp_path / 'served.npy')!r}, out['logits'].numpy())\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH="")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=str(tmp_path), env=env, timeout=300)
    np.testing.assert_allclose(np.load(tmp_path / "served.npy"), expected, rtol=1e-5, atol=1e-6)


def test_failed_export_leaves_nothing_behind(trained, tmp_path):
    def broken_receiver():
        return "not a receiver"

    with pytest.raises(ValueError, match="ServingInputReceiver"):
        trained.export_saved_model(str(tmp_path / "export"), broken_receiver)
    assert not os.path.exists(tmp_path / "export") or os.listdir(tmp_path / "export") == []


def test_export_without_a_checkpoint_says_train_first(tmp_path):
    estimator = TPUEstimator(m.linear_model_fn, model_dir=str(tmp_path), use_tpu=False)
    with pytest.raises(ValueError, match="Could not find a trained model"):
        estimator.export_saved_model(str(tmp_path / "export"), _receiver())


def test_export_interrupted_while_writing_removes_its_partial_folder(trained, tmp_path, monkeypatch):
    real_save = tf.saved_model.save

    def save_then_fail(obj, export_dir, signatures=None):
        real_save(obj, export_dir, signatures=signatures)
        raise OSError("disk full")

    monkeypatch.setattr(tf.saved_model, "save", save_then_fail)
    with pytest.raises(OSError, match="disk full"):
        trained.export_saved_model(str(tmp_path / "export"), _receiver())
    assert os.listdir(tmp_path / "export") == []
