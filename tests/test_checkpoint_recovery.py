"""Issue 8.4-8.6 and 8.8 through the Estimator: mismatches are errors everywhere, a broken state file or a damaged
newest checkpoint falls back (with one warning) instead of starting over, killed saves leave nothing behind, and
the train stream goes on where the checkpoint says (or restarts once it ended).
"""

import logging
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from estimators import CrossShardOptimizer, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from estimators.checkpoint.checkpointer import CheckpointMismatchError
from estimators.export import build_raw_serving_input_receiver_fn
from tests import engine_models as m

DATA = ".data-00000-of-00001"
KERNEL, BIAS = "sequential/dense/kernel", "sequential/dense/bias"


def _estimator(model_dir, model_fn=m.linear_model_fn, **config):
    settings = dict(model_dir=str(model_dir), save_checkpoints_steps=3, tpu_config=TPUConfig(iterations_per_loop=3))
    settings.update(config)
    return TPUEstimator(model_fn, config=RunConfig(**settings), use_tpu=False, params={"adam": True},
                        train_batch_size=16, eval_batch_size=16, predict_batch_size=16)


def _shuffled_input():
    """80 examples reshuffled every epoch with a fixed seed: where a resumed stream starts changes the weights."""
    x, y = m.dataset(80)

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(80, seed=4, reshuffle_each_iteration=True)
        return dataset.repeat().batch(params["batch_size"], drop_remainder=True)

    return input_fn


def _values(estimator) -> dict:
    return {name: estimator.get_variable_value(name) for name in estimator.get_variable_names()}


def _assert_same_values(actual: dict, expected: dict) -> None:
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(actual[name], value, err_msg=name)


@pytest.fixture(scope="module")
def straight_9(tmp_path_factory):
    """The values of one uninterrupted train(max_steps=9) on the shuffled input."""
    return _values(_estimator(tmp_path_factory.mktemp("straight")).train(_shuffled_input(), max_steps=9))


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# -- 8.4: a checkpoint that lacks model variables is refused by evaluate, predict and export ---------------

def _wider_model_fn(features, labels, mode, params):
    """linear_model_fn's model plus twelve layers the checkpoint never had (24 variables)."""
    net = features
    for i in range(12):
        net = keras.layers.Dense(m.FEATURES, name=f"extra_{i:02d}")(net)
    logits = m.linear_model()(net)
    if mode == ModeKeys.PREDICT:
        return TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == ModeKeys.TRAIN:
        return TPUEstimatorSpec(mode, loss=loss, train_op=CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss))
    return TPUEstimatorSpec(mode, loss=loss)


def _assert_short_mismatch_error(err: CheckpointMismatchError, model_dir) -> None:
    message = str(err)
    assert len(message.splitlines()) <= 2, message
    assert f"Checkpoint {model_dir}/model.ckpt-3 does not match the model's variables" in message
    assert "24 missing: " in message and "(14 more)" in message
    assert len(re.findall(r"extra_\d\d/(kernel|bias)", message)) == 10  # at most ten names listed


@pytest.fixture
def trained_linear(tmp_path):
    _estimator(tmp_path).train(m.train_input_fn(*m.dataset(64)), max_steps=3)
    return tmp_path


def test_evaluate_refuses_a_checkpoint_lacking_model_variables_in_one_short_error(trained_linear):
    x, y = m.dataset(32)
    with pytest.raises(CheckpointMismatchError) as err:
        _estimator(trained_linear, _wider_model_fn).evaluate(m.eval_input_fn(x, y))
    _assert_short_mismatch_error(err.value, trained_linear)


def test_predict_refuses_a_checkpoint_lacking_model_variables_in_one_short_error(trained_linear):
    x, _ = m.dataset(32)
    with pytest.raises(CheckpointMismatchError) as err:
        list(_estimator(trained_linear, _wider_model_fn).predict(m.predict_input_fn(x)))
    _assert_short_mismatch_error(err.value, trained_linear)


def test_export_refuses_a_checkpoint_lacking_model_variables_in_one_short_error(trained_linear, tmp_path):
    receiver = build_raw_serving_input_receiver_fn(tf.TensorSpec([None, m.FEATURES], tf.float32))
    with pytest.raises(CheckpointMismatchError) as err:
        _estimator(trained_linear, _wider_model_fn).export_saved_model(str(tmp_path / "export"), receiver)
    _assert_short_mismatch_error(err.value, trained_linear)
    assert not os.path.exists(tmp_path / "export") or not os.listdir(tmp_path / "export")


def test_train_refuses_a_checkpoint_lacking_model_variables_in_one_short_error(trained_linear):
    with pytest.raises(CheckpointMismatchError) as err:
        _estimator(trained_linear, _wider_model_fn).train(m.train_input_fn(*m.dataset(64)), max_steps=6)
    _assert_short_mismatch_error(err.value, trained_linear)


@pytest.mark.parametrize("mode", ["evaluate", "predict", "export"])
def test_main_py_without_a_checkpoint_is_a_one_line_error(tmp_path, mode):
    import main

    argv = ["main.py", "--model=cnn", "--dataset=synthetic", f"--mode={mode}", f"--model_dir={tmp_path / 'empty'}",
            "--eval_batch_size=8", "--predict_batch_size=8", "--eval_steps=1", f"--export_dir={tmp_path / 'export'}"]
    flags.FLAGS.unparse_flags()
    flags.FLAGS(argv)
    with pytest.raises(SystemExit) as ended:
        main.main(["main.py"])
    message = ended.value.code
    assert isinstance(message, str)  # sys.exit("...") prints it to stderr and exits with status 1
    assert len(message.splitlines()) == 1 and message.startswith("error: ")
    assert "holds no checkpoint: train first" in message
    assert not os.path.exists(tmp_path / "export")


# -- 8.5: a missing, empty or unreadable state file never means starting over ---------------------------------

@pytest.mark.parametrize("how", ["missing", "empty", "garbage"])
def test_train_resumes_from_the_newest_checkpoint_when_the_state_file_is_broken(tmp_path, caplog, straight_9, how):
    _estimator(tmp_path).train(_shuffled_input(), max_steps=6)
    state = tmp_path / "checkpoint"
    if how == "missing":
        state.unlink()
    elif how == "empty":
        state.write_text("")
    else:
        state.write_bytes(b"\x00\xffnot a CheckpointState {{{")
    with caplog.at_level(logging.WARNING, logger="absl"):
        resumed = _estimator(tmp_path).train(_shuffled_input(), max_steps=9)
    warned = [w for w in _warnings(caplog) if "checkpoint state file" in w]
    assert len(warned) == 1 and str(tmp_path / "model.ckpt-6") in warned[0] and "\n" not in warned[0]
    _assert_same_values(_values(resumed), straight_9)  # resumed at 6 (weights, slots and stream), not from 0


# -- 8.6: a damaged newest checkpoint falls back to the previous one; killed saves leave nothing ---------------

def _damage(prefix: str, how: str) -> None:
    if how == "truncated data":
        with open(prefix + DATA, "r+b") as f:
            f.truncate(os.path.getsize(prefix + DATA) // 2)
    else:
        with open(prefix + ".index", "wb") as f:
            f.write(b"\x13garbage" * 40)


DAMAGES = ["truncated data", "garbage index"]


@pytest.fixture(params=DAMAGES)
def damaged(request, tmp_path):
    """A model_dir with checkpoints 3 and 6, the newest damaged; and checkpoint 3's weights."""
    _estimator(tmp_path).train(_shuffled_input(), max_steps=6)
    previous = str(tmp_path / "model.ckpt-3")
    weights = tf.train.load_variable(previous, KERNEL), tf.train.load_variable(previous, BIAS)
    _damage(str(tmp_path / "model.ckpt-6"), request.param)
    return tmp_path, weights


def _assert_one_warning_naming(caplog, path) -> None:
    named = [w for w in _warnings(caplog) if str(path) in w]
    assert len(named) == 1 and "\n" not in named[0], named


def test_train_falls_back_to_the_previous_checkpoint_when_the_newest_is_damaged(damaged, caplog, straight_9):
    model_dir, _ = damaged
    with caplog.at_level(logging.WARNING, logger="absl"):
        resumed = _estimator(model_dir).train(_shuffled_input(), max_steps=9)
    _assert_one_warning_naming(caplog, model_dir / "model.ckpt-6")
    _assert_same_values(_values(resumed), straight_9)  # resumed at 3: steps 4-9 again, on the same batches


def test_evaluate_falls_back_to_the_previous_checkpoint_when_the_newest_is_damaged(damaged, caplog):
    model_dir, (kernel, bias) = damaged
    x, y = m.dataset(32)
    with caplog.at_level(logging.WARNING, logger="absl"):
        result = _estimator(model_dir).evaluate(m.eval_input_fn(x, y))
    _assert_one_warning_naming(caplog, model_dir / "model.ckpt-6")
    assert result["global_step"] == 3
    assert result["loss"] == pytest.approx(m.numpy_eval(kernel, bias, x, y)[0], rel=1e-5)


def test_predict_falls_back_to_the_previous_checkpoint_when_the_newest_is_damaged(damaged, caplog):
    model_dir, (kernel, bias) = damaged
    x, _ = m.dataset(32)
    with caplog.at_level(logging.WARNING, logger="absl"):
        logits = [p["logits"] for p in _estimator(model_dir).predict(m.predict_input_fn(x))]
    _assert_one_warning_naming(caplog, model_dir / "model.ckpt-6")
    np.testing.assert_allclose(logits, x @ kernel + bias, rtol=1e-5, atol=1e-6)


def test_export_falls_back_to_the_previous_checkpoint_when_the_newest_is_damaged(damaged, caplog, tmp_path):
    model_dir, (kernel, bias) = damaged
    x, _ = m.dataset(32)
    receiver = build_raw_serving_input_receiver_fn(tf.TensorSpec([None, m.FEATURES], tf.float32))
    with caplog.at_level(logging.WARNING, logger="absl"):
        export_dir = _estimator(model_dir).export_saved_model(str(tmp_path / "export"), receiver)
    _assert_one_warning_naming(caplog, model_dir / "model.ckpt-6")
    served = tf.saved_model.load(os.fsdecode(export_dir)).signatures["serving_default"]
    np.testing.assert_allclose(served(input=tf.constant(x))["logits"], x @ kernel + bias, rtol=1e-5, atol=1e-6)


def test_train_removes_what_killed_saves_left_behind(tmp_path):
    _estimator(tmp_path).train(_shuffled_input(), max_steps=3)
    leftovers = ["model.ckpt-6" + DATA + ".tempstate8123456789", "model.ckpt-6.index.tempstate42",
                 "checkpoint.tmp" + "5d41402abc4b2a76b9719d911017c592"]
    for name in leftovers:
        (tmp_path / name).write_bytes(b"half a save")
    (tmp_path / "model.ckpt-6_temp").mkdir()
    (tmp_path / "model.ckpt-6_temp" / ("part-00000-of-00001" + DATA)).write_bytes(b"half a save")
    _estimator(tmp_path).train(_shuffled_input(), max_steps=6)
    left = sorted(n for n in os.listdir(tmp_path) if "temp" in n or ".tmp" in n)
    assert left == []
    assert _estimator(tmp_path).latest_checkpoint() == str(tmp_path / "model.ckpt-6")


# -- 8.8: where the train stream resumes ------------------------------------------------------------------

def test_a_new_estimator_resumes_the_stream_where_the_checkpoint_says(tmp_path, straight_9):
    _estimator(tmp_path).train(_shuffled_input(), max_steps=5)  # 5 steps: not at a loop or save boundary
    resumed = _estimator(tmp_path).train(_shuffled_input(), max_steps=9)
    assert resumed.get_variable_value("estimators/input_position") == 9
    _assert_same_values(_values(resumed), straight_9)


def test_a_stream_that_ended_restarts_from_its_beginning(tmp_path):
    """tf.estimator called input_fn again at each train(): after the end of the data, a new pass begins."""
    x, y = m.dataset(80)

    def five_batches(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(params["batch_size"], drop_remainder=True)

    _estimator(tmp_path / "split").train(five_batches, max_steps=100)  # ends at step 5, with the data
    again = _estimator(tmp_path / "split").train(five_batches, max_steps=100)  # a new Estimator, as a new process
    assert again.get_variable_value("global_step") == 10

    def two_passes(params):
        return five_batches(params).repeat(2)

    straight = _estimator(tmp_path / "straight").train(two_passes, max_steps=100)
    assert straight.get_variable_value("global_step") == 10
    _assert_same_values(_values(again), _values(straight))


def _checkpoint_bytes(path: str) -> int:
    return sum(os.path.getsize(path + suffix) for suffix in (".index", DATA))


def test_the_saved_input_position_costs_one_int64_and_well_under_a_hundred_bytes(tmp_path):
    """The cost the issue asks for: the same 5 steps with and without `estimators/input_position`."""
    with_position = _estimator(tmp_path / "with").train(_shuffled_input(), max_steps=5)
    without = _estimator(tmp_path / "without", save_input_position=False).train(_shuffled_input(), max_steps=5)
    reader = tf.train.load_checkpoint(with_position.latest_checkpoint())
    assert reader.get_variable_to_shape_map()["estimators/input_position"] == []
    assert reader.get_variable_to_dtype_map()["estimators/input_position"] == tf.int64
    cost = _checkpoint_bytes(with_position.latest_checkpoint()) - _checkpoint_bytes(without.latest_checkpoint())
    print(f"input position: {cost} bytes per checkpoint")
    assert 8 <= cost < 100


def test_save_input_position_false_writes_no_position_and_a_new_process_restarts_the_stream(tmp_path, straight_9):
    """The opt-out: what tf.estimator did (input_fn called afresh at every train()), checkpoints without the key."""
    _estimator(tmp_path / "split", save_input_position=False).train(_shuffled_input(), max_steps=5)
    resumed = _estimator(tmp_path / "split", save_input_position=False).train(_shuffled_input(), max_steps=9)
    assert "estimators/input_position" not in resumed.get_variable_names()
    # The reference: 5 steps, then 4 more from the stream's beginning (a new input_fn, as a new process calls it).
    reference = _estimator(tmp_path / "restarted", save_input_position=False)
    reference.train(_shuffled_input(), max_steps=5)
    reference.train(_shuffled_input(), max_steps=9)  # another input_fn object: the stream starts over
    _assert_same_values(_values(resumed), _values(reference))
    assert not np.array_equal(resumed.get_variable_value(KERNEL), straight_9[KERNEL]), "the restart changed nothing"


def test_save_input_position_must_be_a_bool():
    with pytest.raises(ValueError, match="save_input_position must be True or False"):
        RunConfig(save_input_position="no")
