"""A diverged model is never checkpointed (issue 17, item 3), on the TF2 path and on the graph path.

The model_fn's learning rate becomes infinite at a chosen global step: the update of that step makes the
weights infinite while its loss is still finite (the save after it is refused), and the next step's loss is
NaN (the NaN guard stops training). After either, the latest checkpoint holds finite values, the error
names it, and a resume with a sane learning rate starts from it. A checkpoint holding NaN or Inf (made by
hand here, as an earlier version of this code saved them) is reported when restored.
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest
import tensorflow as tf

import estimators
from estimators.checkpoint import finite, state_file, writer
from estimators.checkpoint.checkpointer import Checkpointer
from estimators.checkpoint.finite import NanLossError, NonFiniteCheckpointError

X = (np.arange(32, dtype=np.float32).reshape(16, 2) % 7 - 3.0) / 3.0  # has zeros: inf * 0 makes the loss NaN
Y = (X @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)
PATHS = ["tf2", "graph"]


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(4)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices(X).batch(4)


def serving_input_receiver_fn():
    features = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
    return estimators.export.ServingInputReceiver(features, {"x": features})


def blowing_up_model_fn(features, labels, mode, params):
    """Linear regression with momentum whose learning rate is infinite from global step params["blow_at"] on."""
    features = next(iter(features.values())) if isinstance(features, dict) else features  # a serving receiver
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer([[0.1], [0.2]]))
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features, w) + b
    if mode == estimators.ModeKeys.PREDICT:
        return estimators.EstimatorSpec(mode, predictions={"y": predictions},
                                        export_outputs={"y": estimators.export.PredictOutput({"y": predictions})})
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    step = tf.compat.v1.train.get_global_step()
    blow_at = params.get("blow_at")
    rate = 0.05 if blow_at is None else tf.where(step >= blow_at, float("inf"), 0.05)
    train_op = tf.compat.v1.train.MomentumOptimizer(rate, 0.9).minimize(loss, global_step=step)
    return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={"mae": tf.compat.v1.metrics.mean_absolute_error(labels,
                                                                                                     predictions)})


def _estimator(model_dir, path: str, save_every: int = 1, **params) -> estimators.Estimator:
    config = estimators.RunConfig(model_dir=str(model_dir), save_checkpoints_steps=save_every, execution=path,
                                  tpu_config=estimators.TPUConfig(iterations_per_loop=1))
    return estimators.Estimator(blowing_up_model_fn, config=config, params=params)


def _diverge(model_dir, path: str, save_every: int = 1, blow_at: int = 3) -> NanLossError:
    """Trains until the model diverges; returns the error train() raised."""
    with pytest.raises(NanLossError) as raised:
        _estimator(model_dir, path, save_every, blow_at=blow_at).train(train_input_fn, max_steps=20)
    return raised.value


def _nonfinite(path: str) -> list[str]:
    return finite.nonfinite_in_checkpoint(path)


def _hand_made_nonfinite_checkpoint(model_dir, step: int) -> str:
    """model.ckpt-<step>: the latest checkpoint's values with an infinite `w`, published as the latest (as the
    code before this check left a diverged run)."""
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(model_dir)))
    values = {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}
    values["w"] = np.full_like(values["w"], np.inf)
    values["global_step"] = np.int64(step)
    prefix = os.path.join(str(model_dir), f"model.ckpt-{step}")
    writer.write({name: tf.Variable(value) for name, value in values.items()}, prefix)
    state_file.write(str(model_dir), [*state_file.read(str(model_dir)).listed, prefix])
    return prefix


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# -- the save check ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", PATHS)
def test_weights_that_become_infinite_are_not_saved_and_training_stops(tmp_path, path):
    error = _diverge(tmp_path, path, blow_at=3)
    assert isinstance(error, NonFiniteCheckpointError)
    assert not tf.io.gfile.glob(str(tmp_path / "model.ckpt-4*"))


@pytest.mark.parametrize("path", PATHS)
def test_after_divergence_the_latest_checkpoint_holds_finite_values(tmp_path, path):
    _diverge(tmp_path, path, blow_at=3)
    latest = tf.train.latest_checkpoint(str(tmp_path))  # TensorFlow's own reading of the state file
    assert latest.endswith("model.ckpt-3")
    assert _nonfinite(latest) == []


@pytest.mark.parametrize("path", PATHS)
def test_the_refused_save_names_the_variables_and_the_latest_finite_checkpoint(tmp_path, path):
    error = _diverge(tmp_path, path, blow_at=3)
    assert str(error).startswith("Training diverged: NaN or Inf in ")
    assert " (b, w) at global step 4; stopping without saving a checkpoint. " in str(error)
    assert f"The latest checkpoint, {tmp_path}/model.ckpt-3, holds finite values: train() resumes from it." in str(
        error)


@pytest.mark.parametrize("path", PATHS)
def test_a_nan_loss_names_the_latest_finite_checkpoint(tmp_path, path):
    error = _diverge(tmp_path, path, save_every=3, blow_at=3)  # saved at 3; no save due when the weights blow up
    assert not isinstance(error, NonFiniteCheckpointError)
    assert str(error).startswith("Loss became nan at global step 5; stopping without saving a checkpoint.")
    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert f"The latest checkpoint, {latest}, holds finite values" in str(error)
    assert _nonfinite(latest) == []


def test_divergence_errors_are_floating_point_errors_and_2_15s_nan_loss_error():
    error = NanLossError("Loss became nan at global step 5")
    assert isinstance(error, FloatingPointError)
    assert isinstance(error, tf.compat.v1.train.NanLossDuringTrainingError)
    assert str(error) == "Loss became nan at global step 5"


@pytest.mark.parametrize("path", PATHS)
def test_training_resumes_from_the_latest_finite_checkpoint(tmp_path, path):
    _diverge(tmp_path, path, blow_at=3)
    estimator = _estimator(tmp_path, path).train(train_input_fn, max_steps=6)
    latest = estimator.latest_checkpoint()
    assert latest.endswith("model.ckpt-6")
    assert _nonfinite(latest) == []


def test_the_checkpointer_refuses_nonfinite_variables_and_writes_nothing(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    checkpointer.save({"w": tf.Variable([1.0]), "global_step": tf.Variable(1, dtype=tf.int64)}, 1)
    with pytest.raises(NonFiniteCheckpointError, match=r"NaN or Inf in 1 variable\(s\) \(w\) at global step 2.*"
                                                        r"model.ckpt-1, holds finite values"):
        checkpointer.save({"w": tf.Variable([np.nan]), "global_step": tf.Variable(2, dtype=tf.int64)}, 2)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index"]


def test_when_every_checkpoint_is_nonfinite_none_is_named_and_none_is_dropped(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    poisoned = {"w": tf.Variable([np.inf]), "global_step": tf.Variable(1, dtype=tf.int64)}
    for step in (1, 2):  # published without the check, as the code before it did
        checkpointer.publish(step, lambda prefix: writer.write(poisoned, prefix))
    assert checkpointer.resume_note().startswith("Every checkpoint in model_dir holds NaN or Inf: delete them")
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-2")


def test_bfloat16_and_integer_variables_are_checked_by_their_kind(tmp_path):
    variables = {"h": tf.Variable([np.inf], dtype=tf.bfloat16), "n": tf.Variable([7]), "f": tf.Variable([2.0])}
    assert finite.nonfinite_variables(variables) == ["h"]


# -- checkpoints saved before this check ------------------------------------------------------------------------
@pytest.mark.parametrize("path", PATHS)
def test_a_nonfinite_latest_checkpoint_is_dropped_from_the_state_file_when_training_diverges(tmp_path, path):
    _estimator(tmp_path, path, save_every=2).train(train_input_fn, max_steps=2)
    finite_one = tf.train.latest_checkpoint(str(tmp_path))
    _hand_made_nonfinite_checkpoint(tmp_path, 4)
    with pytest.raises(NanLossError, match=f"The latest checkpoint, {finite_one}, holds finite values"):
        _estimator(tmp_path, path, save_every=2).train(train_input_fn, max_steps=8)
    assert tf.train.latest_checkpoint(str(tmp_path)) == finite_one


@pytest.mark.parametrize("path", PATHS)
def test_evaluate_warns_when_the_checkpoint_holds_nonfinite_values(tmp_path, path, caplog):
    _estimator(tmp_path, path).train(train_input_fn, max_steps=1)
    bad = _hand_made_nonfinite_checkpoint(tmp_path, 4)
    with caplog.at_level(logging.WARNING, logger="absl"):
        _estimator(tmp_path, path).evaluate(eval_input_fn)
    assert [w for w in _warnings(caplog) if w.startswith(f"Checkpoint {bad} holds NaN or Inf in 1 variable(s) (w)")]


@pytest.mark.parametrize("path", PATHS)
def test_predict_warns_when_the_checkpoint_holds_nonfinite_values(tmp_path, path, caplog):
    _estimator(tmp_path, path).train(train_input_fn, max_steps=1)
    bad = _hand_made_nonfinite_checkpoint(tmp_path, 4)
    with caplog.at_level(logging.WARNING, logger="absl"):
        list(_estimator(tmp_path, path).predict(predict_input_fn))
    assert [w for w in _warnings(caplog) if w.startswith(f"Checkpoint {bad} holds NaN or Inf")]


@pytest.mark.parametrize("path", PATHS)
def test_export_warns_when_the_checkpoint_holds_nonfinite_values(tmp_path, path, caplog):
    _estimator(tmp_path, path).train(train_input_fn, max_steps=1)
    bad = _hand_made_nonfinite_checkpoint(tmp_path, 4)
    with caplog.at_level(logging.WARNING, logger="absl"):
        _estimator(tmp_path, path).export_saved_model(str(tmp_path / "export"), serving_input_receiver_fn)
    assert [w for w in _warnings(caplog) if w.startswith(f"Checkpoint {bad} holds NaN or Inf")]


@pytest.mark.parametrize("path", PATHS)
def test_a_finite_checkpoint_restores_without_a_warning(tmp_path, path, caplog):
    _estimator(tmp_path, path).train(train_input_fn, max_steps=2)
    with caplog.at_level(logging.WARNING, logger="absl"):
        _estimator(tmp_path, path).evaluate(eval_input_fn)
    assert not [w for w in _warnings(caplog) if "NaN or Inf" in w]


def test_mirrored_variables_of_eight_replicas_are_checked_before_a_save(tmp_path, eight_replicas):
    config = estimators.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=1, train_distribute=eight_replicas,
                                  tpu_config=estimators.TPUConfig(iterations_per_loop=1))
    estimator = estimators.Estimator(blowing_up_model_fn, config=config, params={"blow_at": 3})
    with pytest.raises(NonFiniteCheckpointError, match=r"\(b, w\) at global step 4"):
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(16), max_steps=20)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")
