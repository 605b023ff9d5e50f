"""Checkpointer: tf.estimator's checkpoint files, verified saves, no silent restarts, all-or-nothing restores."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators.checkpoint.checkpointer import (
    CheckpointCorruptError,
    Checkpointer,
    CheckpointMismatchError,
    CheckpointSaveError,
    NoUsableCheckpointError,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TF_ESTIMATOR_DIR = os.path.join(ROOT, "tests", "data", "tf_estimator_215_model_dir")  # written by tf.estimator 2.15
REFERENCE_PYTHON = "/work/ref215/bin/python"  # TF 2.15.1 + tensorflow-estimator 2.15.0, where present
DATA = ".data-00000-of-00001"


def _variables(seed: int = 0) -> dict[str, tf.Variable]:
    rng = np.random.RandomState(seed)
    return {
        "global_step": tf.Variable(seed, dtype=tf.int64),
        "dense/kernel": tf.Variable(rng.randn(3, 2).astype(np.float32)),
        "dense/bias": tf.Variable(rng.randn(2).astype(np.float32)),
        "dense/kernel/Adam": tf.Variable(rng.randn(3, 2).astype(np.float32)),
    }


def _saved(model_dir, steps, max_to_keep=5) -> Checkpointer:
    checkpointer = Checkpointer(str(model_dir), max_to_keep=max_to_keep)
    for step in steps:
        checkpointer.save(_variables(step), step)
    return checkpointer


def _values(variables) -> dict[str, np.ndarray]:
    return {name: var.numpy() for name, var in variables.items()}


# -- the format ---------------------------------------------------------------------------------------
def test_save_writes_tf_estimator_files_keys_and_state_file(tmp_path):
    path = Checkpointer(str(tmp_path)).save(_variables(7), step=7)
    assert path == str(tmp_path / "model.ckpt-7")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-7" + DATA, "model.ckpt-7.index"]
    assert dict(tf.train.list_variables(path)) == {"global_step": [], "dense/kernel": [3, 2], "dense/bias": [2],
                                                   "dense/kernel/Adam": [3, 2]}
    assert tf.train.latest_checkpoint(str(tmp_path)) == path  # TensorFlow's own reader agrees
    # Bare names, as tf.estimator 2.15 wrote them (see the state file it wrote in tests/data).
    assert (tmp_path / "checkpoint").read_text() == 'model_checkpoint_path: "model.ckpt-7"\n' \
                                                    'all_model_checkpoint_paths: "model.ckpt-7"\n'


def test_restore_round_trips_every_value_and_dtype(tmp_path):
    saved = _variables(3)
    checkpointer = Checkpointer(str(tmp_path))
    path = checkpointer.save(saved, step=3)
    fresh = _variables(99)
    checkpointer.restore(path, fresh)
    for name, value in _values(saved).items():
        np.testing.assert_array_equal(fresh[name].numpy(), value)
    assert checkpointer.global_step(path) == 3
    assert checkpointer.contents(path)["global_step"] == ((), tf.int64)
    assert checkpointer.contents(path)["dense/kernel"] == ((3, 2), tf.float32)


def test_keras_variables_save_and_restore_under_the_names_given(tmp_path):
    layer = keras.layers.Dense(2)
    layer.build((None, 3))
    checkpointer = Checkpointer(str(tmp_path))
    path = checkpointer.save({"dense/kernel": layer.kernel, "dense/bias": layer.bias}, step=1)
    expected = layer.kernel.numpy()
    layer.kernel.assign(np.zeros([3, 2], np.float32))
    checkpointer.restore(path, {"dense/kernel": layer.kernel})
    np.testing.assert_array_equal(layer.kernel.numpy(), expected)


def test_mirrored_variables_save_one_value_and_restore_into_every_replica(eight_replicas, tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    with eight_replicas.scope():  # as the engine calls it, between training loops
        saved = _variables(5)
        fresh = _variables(6)
        path = checkpointer.save(saved, step=5)
        checkpointer.restore(path, fresh)
    assert dict(tf.train.list_variables(path))["dense/kernel"] == [3, 2]
    for name, var in fresh.items():
        for replica_value in var.values:
            np.testing.assert_array_equal(replica_value.numpy(), saved[name].numpy())


def test_a_tf_estimator_2_15_model_dir_is_read_as_it_is(tmp_path):
    model_dir = shutil.copytree(TF_ESTIMATOR_DIR, tmp_path / "old")
    checkpointer = Checkpointer(str(model_dir))
    assert checkpointer.latest() == str(model_dir / "model.ckpt-3")
    assert checkpointer.checkpoints() == [str(model_dir / "model.ckpt-2"), str(model_dir / "model.ckpt-3")]
    assert checkpointer.global_step(checkpointer.latest()) == 3
    contents = checkpointer.contents(checkpointer.latest())
    assert {"global_step", "dense/kernel", "dense/bias", "dense/kernel/Adam", "beta1_power"} <= set(contents)
    kernel = tf.Variable(np.zeros([3, 2], np.float32))
    checkpointer.restore(checkpointer.latest(), {"dense/kernel": kernel})
    np.testing.assert_array_equal(kernel.numpy(), tf.train.load_variable(str(model_dir), "dense/kernel"))


_TF_ESTIMATOR_READS = r"""
import sys
import numpy as np
import tensorflow as tf

def model_fn(features, labels, mode):
    y = tf.compat.v1.layers.dense(features["x"], 2, name="dense")
    return tf.estimator.EstimatorSpec(mode, predictions={"y": y})

estimator = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
row = next(estimator.predict(lambda: tf.data.Dataset.from_tensors({"x": np.ones([1, 3], np.float32)})))
print("RESULT", estimator.latest_checkpoint(), int(estimator.get_variable_value("global_step")), *row["y"])
"""


@pytest.mark.skipif(not os.path.exists(REFERENCE_PYTHON), reason="no TF 2.15 reference environment here")
def test_tf_estimator_2_15_reads_what_we_write(tmp_path):
    Checkpointer(str(tmp_path)).save({"global_step": tf.Variable(7, dtype=tf.int64),
                                      "dense/kernel": tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2)),
                                      "dense/bias": tf.Variable(np.array([10.0, 20.0], np.float32))}, step=7)
    done = subprocess.run([REFERENCE_PYTHON, "-c", _TF_ESTIMATOR_READS, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT")]
    assert result, done.stderr[-3000:]
    assert result[-1].split()[1:] == [str(tmp_path / "model.ckpt-7"), "7", "16.0", "29.0"]  # ones @ kernel + bias


@pytest.mark.parametrize("old_place", ["/home/someone/old_run", "gs://old-bucket/runs/old_run"])
def test_absolute_paths_from_another_machine_resolve_inside_model_dir(tmp_path, old_place):
    """TF1-era tf.estimator wrote absolute paths; the folder was then copied to Drive or another bucket."""
    model_dir = shutil.copytree(TF_ESTIMATOR_DIR, tmp_path / "copied")
    (model_dir / "checkpoint").write_text(
        f'model_checkpoint_path: "{old_place}/model.ckpt-3"\n'
        f'all_model_checkpoint_paths: "{old_place}/model.ckpt-2"\n'
        f'all_model_checkpoint_paths: "{old_place}/model.ckpt-3"\n')
    checkpointer = Checkpointer(str(model_dir), max_to_keep=2)
    assert checkpointer.latest() == str(model_dir / "model.ckpt-3")
    checkpointer.save(_variables(4), step=4)  # pruning finds the old ones too
    assert checkpointer.checkpoints() == [str(model_dir / "model.ckpt-3"), str(model_dir / "model.ckpt-4")]
    assert not (model_dir / "model.ckpt-2.index").exists()


def test_checkpoints_of_this_projects_previous_version_are_listed_and_latest(tmp_path):
    """The previous version wrote object-based `ckpt-N` with tf.train.CheckpointManager."""
    step = tf.Variable(4, dtype=tf.int64)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(global_step=step), str(tmp_path), max_to_keep=5)
    old = manager.save(checkpoint_number=4)
    checkpointer = Checkpointer(str(tmp_path))
    assert checkpointer.latest() == old == str(tmp_path / "ckpt-4")
    assert checkpointer.global_step(old) == 4
    assert "global_step/.ATTRIBUTES/VARIABLE_VALUE" in checkpointer.contents(old)
    new = checkpointer.save(_variables(6), step=6)
    assert checkpointer.checkpoints() == [old, new] and checkpointer.latest() == new
    (tmp_path / "checkpoint").unlink()
    assert checkpointer.checkpoints() == [old, new]  # found by listing as well


# -- keeping and pruning ------------------------------------------------------------------------------
def test_only_the_newest_max_to_keep_checkpoints_are_kept(tmp_path):
    checkpointer = _saved(tmp_path, [1, 2, 3, 4], max_to_keep=2)
    assert checkpointer.checkpoints() == [str(tmp_path / "model.ckpt-3"), str(tmp_path / "model.ckpt-4")]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-3" + DATA, "model.ckpt-3.index",
                                            "model.ckpt-4" + DATA, "model.ckpt-4.index"]


@pytest.mark.parametrize("keep_all", [0, None])
def test_max_to_keep_zero_or_none_keeps_every_checkpoint(tmp_path, keep_all):
    checkpointer = _saved(tmp_path, [1, 2, 3, 4, 5, 6, 7], max_to_keep=keep_all)
    assert len(checkpointer.checkpoints()) == 7


def test_pruning_continues_across_processes_from_the_state_file(tmp_path):
    _saved(tmp_path, [1, 2], max_to_keep=2)
    _saved(tmp_path, [3], max_to_keep=2)  # a new Checkpointer, as after a restart
    assert [os.path.basename(p) for p in Checkpointer(str(tmp_path)).checkpoints()] == ["model.ckpt-2", "model.ckpt-3"]


def test_a_non_chief_writes_nothing(tmp_path):
    assert Checkpointer(str(tmp_path / "run"), is_chief=False).save(_variables(), step=1) is None
    assert not (tmp_path / "run").exists()


def test_resaving_a_published_step_replaces_it(tmp_path):
    checkpointer = _saved(tmp_path, [1, 2])
    checkpointer.save(_variables(20), step=2)
    assert checkpointer.checkpoints() == [str(tmp_path / "model.ckpt-1"), str(tmp_path / "model.ckpt-2")]
    assert tf.train.load_variable(str(tmp_path / "model.ckpt-2"), "global_step") == 20


# -- never silently start over ------------------------------------------------------------------------
def _break_state_file(model_dir, how: str) -> None:
    state = model_dir / "checkpoint"
    if how == "missing":
        state.unlink()
    elif how == "empty":
        state.write_text("")
    else:
        state.write_bytes(b"\x00\xffgarbage{{{ not a proto")


@pytest.mark.parametrize("how", ["missing", "empty", "garbage"])
def test_without_a_usable_state_file_the_newest_complete_checkpoint_is_found_with_a_warning(tmp_path, caplog, how):
    checkpointer = _saved(tmp_path, [5, 10, 15])
    _break_state_file(tmp_path, how)
    with caplog.at_level(logging.WARNING, logger="absl"):
        assert checkpointer.latest() == str(tmp_path / "model.ckpt-15")
    assert ("is unreadable" if how == "garbage" else f"is {how}") in caplog.text
    assert "model.ckpt-15" in caplog.text


def _damage(prefix: str, how: str) -> None:
    data, index = prefix + DATA, prefix + ".index"
    if how == "truncated data":
        with open(data, "r+b") as f:
            f.truncate(os.path.getsize(data) // 2)
    elif how == "empty data":
        open(data, "wb").close()
    elif how == "missing data":
        os.remove(data)
    elif how == "garbage index":
        with open(index, "wb") as f:
            f.write(os.urandom(os.path.getsize(index)))
    elif how == "truncated index":
        with open(index, "r+b") as f:
            f.truncate(10)


DAMAGES = ["truncated data", "empty data", "missing data", "garbage index", "truncated index"]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_newest_checkpoint_falls_back_to_the_previous_one_with_one_warning(tmp_path, caplog, how):
    checkpointer = _saved(tmp_path, [1, 2])
    _damage(str(tmp_path / "model.ckpt-2"), how)
    with caplog.at_level(logging.WARNING, logger="absl"):
        assert checkpointer.latest() == str(tmp_path / "model.ckpt-1")
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "model.ckpt-2" in warnings[0] and "\n" not in warnings[0]
    assert checkpointer.checkpoints() == [str(tmp_path / "model.ckpt-1")]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_checkpoint_without_state_file_falls_back_too(tmp_path, how):
    checkpointer = _saved(tmp_path, [1, 2])
    (tmp_path / "checkpoint").unlink()
    _damage(str(tmp_path / "model.ckpt-2"), how)
    assert checkpointer.latest() == str(tmp_path / "model.ckpt-1")


def test_when_no_checkpoint_is_complete_training_refuses_to_start_over(tmp_path):
    checkpointer = _saved(tmp_path, [1])
    _damage(str(tmp_path / "model.ckpt-1"), "truncated data")
    with pytest.raises(NoUsableCheckpointError, match=r"none is complete: .*ckpt-1 \(data files hold .*Refusing"):
        checkpointer.latest()


def test_a_state_file_naming_deleted_checkpoints_refuses_to_start_over(tmp_path):
    checkpointer = _saved(tmp_path, [1])
    for name in ("model.ckpt-1.index", "model.ckpt-1" + DATA):
        (tmp_path / name).unlink()
    with pytest.raises(NoUsableCheckpointError, match="none is complete: .*model.ckpt-1 \\(no .index file\\)"):
        checkpointer.latest()


def test_a_complete_checkpoint_never_published_is_ignored_while_the_state_file_is_usable(tmp_path):
    """Killed between writing and publishing: the state file still names the one before, as it should."""
    checkpointer = _saved(tmp_path, [1, 2])
    state = (tmp_path / "checkpoint").read_text()
    checkpointer.save(_variables(3), step=3)
    (tmp_path / "checkpoint").write_text(state)
    assert checkpointer.latest() == str(tmp_path / "model.ckpt-2")
    assert checkpointer.checkpoints() == [str(tmp_path / "model.ckpt-1"), str(tmp_path / "model.ckpt-2")]


def test_an_empty_or_absent_model_dir_has_no_latest_checkpoint(tmp_path):
    assert Checkpointer(str(tmp_path / "absent")).latest() is None
    assert Checkpointer(str(tmp_path)).latest() is None
    assert Checkpointer(str(tmp_path)).checkpoints() == []


def test_the_state_file_names_only_complete_checkpoints(tmp_path):
    """Verify then publish: a save that fails leaves the state file naming the previous checkpoint."""
    checkpointer = _saved(tmp_path, [1])
    (tmp_path / "model.ckpt-2.index").mkdir()  # the index cannot be written: the save fails half-way
    with pytest.raises(CheckpointSaveError, match=r"step 2 .*The latest checkpoint is still .*model.ckpt-1\.$"):
        checkpointer.save(_variables(2), step=2)
    assert tf.train.get_checkpoint_state(str(tmp_path)).model_checkpoint_path == str(tmp_path / "model.ckpt-1")
    assert checkpointer.latest() == str(tmp_path / "model.ckpt-1")


def test_leftovers_of_killed_saves_are_removed_by_the_next_save(tmp_path):
    leftovers = ["model.ckpt-5" + DATA + ".tempstate4242424242", "model.ckpt-5.index.tempstate17",
                 "checkpoint.tmp" + "0123456789abcdef" * 2]
    for name in leftovers:
        (tmp_path / name).write_bytes(b"partial")
    for folder in ("model.ckpt-5_temp", "model.ckpt-3_temp_" + "0123456789abcdef" * 2):  # sharded Savers' (TF 2, 1)
        (tmp_path / folder).mkdir()
        (tmp_path / folder / ("part-00000-of-00001" + DATA)).write_bytes(b"partial")
    (tmp_path / "notes_temp.txt").write_text("not ours")
    Checkpointer(str(tmp_path)).save(_variables(6), step=6)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-6" + DATA, "model.ckpt-6.index",
                                            "notes_temp.txt"]


# -- restoring: all or nothing ------------------------------------------------------------------------
def test_a_mismatch_is_one_short_error_with_counts_and_changes_no_variable(tmp_path):
    stored = {f"layer_{i:02d}/kernel": tf.Variable(np.ones([2, 2], np.float32)) for i in range(30)}
    checkpointer = Checkpointer(str(tmp_path))
    path = checkpointer.save(stored, step=1)
    model = {f"layer_{i:02d}/kernel": tf.Variable(np.zeros([3, 2] if i < 12 else [2, 2], np.float32))
             for i in range(30)}
    model.update({f"extra_{i:02d}/bias": tf.Variable(np.zeros([2], np.float32)) for i in range(25)})
    with pytest.raises(CheckpointMismatchError) as caught:
        checkpointer.restore(path, model)
    message = str(caught.value)
    assert "25 missing: extra_00/bias, " in message and "extra_09/bias, ... (15 more)" in message
    assert "extra_10/bias" not in message
    assert "12 with another shape or dtype: layer_00/kernel (checkpoint [2, 2] float32, model [3, 2] float32)" \
        in message
    assert "(2 more)" in message and "\n" not in message
    assert all(not var.numpy().any() for var in model.values()), "a failed restore changed a variable"


def test_another_dtype_is_a_mismatch(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    path = checkpointer.save({"global_step": tf.Variable(1, dtype=tf.int64)}, step=1)
    with pytest.raises(CheckpointMismatchError, match=r"global_step \(checkpoint \[\] int64, model \[\] int32\)"):
        checkpointer.restore(path, {"global_step": tf.Variable(0, dtype=tf.int32)})


def test_damaged_values_are_found_before_anything_is_assigned(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    path = checkpointer.save(_variables(1), step=1)
    with open(path + DATA, "r+b") as f:  # same size, other bytes: only the checksums can tell
        f.seek(8)
        f.write(b"\x7f" * 16)
    fresh = _variables(2)
    before = _values(fresh)
    with pytest.raises(CheckpointCorruptError, match="is damaged.*Nothing was restored"):
        checkpointer.restore(path, fresh)
    for name, value in before.items():
        np.testing.assert_array_equal(fresh[name].numpy(), value)


def test_one_checkpoint_value_can_restore_several_variables(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    path = checkpointer.save(_variables(1), step=1)
    first, second = tf.Variable(np.zeros(2, np.float32)), tf.Variable(np.zeros(2, np.float32))
    checkpointer.restore(path, {"dense/bias": (first, second)})
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    assert first.numpy().any()
