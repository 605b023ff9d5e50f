"""The `checkpoint` state file is written as tf.estimator 2.15 wrote it and read back by TensorFlow (issue 17, item 4).

2.15's Saver (save_relative_paths=True) wrote checkpoints inside model_dir by bare name, for relative, absolute
and gs:// model_dirs (tests/fixtures/names215/*/model_dir/checkpoint). The gs:// case is
tests/test_gcs_resume_faults.py's first run.
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest
import tensorflow as tf

from estimators.checkpoint.checkpointer import Checkpointer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE_215 = os.path.join(ROOT, "tests", "fixtures", "names215", "keras_layers", "model_dir", "checkpoint")


def _save(model_dir: str, *steps: int, keep: int = 5) -> Checkpointer:
    checkpointer = Checkpointer(model_dir, max_to_keep=keep)
    for step in steps:
        checkpointer.save({"global_step": tf.Variable(step, dtype=tf.int64),
                           "dense/kernel": tf.Variable(np.full((2, 2), step, np.float32))}, step)
    return checkpointer


class _Errors(logging.Handler):
    """TensorFlow's own log errors (latest_checkpoint's "Couldn't match files for checkpoint ...")."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def tf_errors():
    handler = _Errors()
    tf.get_logger().addHandler(handler)
    yield handler.messages
    tf.get_logger().removeHandler(handler)


def _text(model_dir: str) -> str:
    with tf.io.gfile.GFile(os.path.join(model_dir, "checkpoint")) as f:
        return f.read()


def test_the_state_file_text_is_what_tf_estimator_215_wrote(tmp_path):
    _save(str(tmp_path), 2)
    with open(FIXTURE_215) as f:
        assert _text(str(tmp_path)) == f.read()


def test_a_relative_model_dir_names_checkpoints_by_bare_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _save(os.path.join("runs", "linear_synthetic"), 3, 9)
    assert _text("runs/linear_synthetic") == ('model_checkpoint_path: "model.ckpt-9"\n'
                                              'all_model_checkpoint_paths: "model.ckpt-3"\n'
                                              'all_model_checkpoint_paths: "model.ckpt-9"\n')


def test_tensorflow_finds_a_relative_model_dirs_checkpoint_from_the_working_directory(tmp_path, monkeypatch,
                                                                                         tf_errors):
    monkeypatch.chdir(tmp_path)
    _save("runs/m", 3, 9)
    assert tf.train.latest_checkpoint("runs/m") == "runs/m/model.ckpt-9"
    state = tf.train.get_checkpoint_state("runs/m")
    assert list(state.all_model_checkpoint_paths) == ["runs/m/model.ckpt-3", "runs/m/model.ckpt-9"]
    assert tf_errors == []


def test_tensorflow_finds_a_relative_model_dirs_checkpoint_after_the_working_directory_changes(tmp_path, monkeypatch,
                                                                                                 tf_errors):
    monkeypatch.chdir(tmp_path)
    _save("runs/m", 4)
    monkeypatch.chdir(tmp_path / "runs")
    assert tf.train.latest_checkpoint("m") == "m/model.ckpt-4"
    monkeypatch.chdir(ROOT)
    assert tf.train.latest_checkpoint(str(tmp_path / "runs" / "m")) == str(tmp_path / "runs" / "m" / "model.ckpt-4")
    assert tf_errors == []


def test_tensorflow_finds_an_absolute_model_dirs_checkpoint_after_the_folder_moves(tmp_path, tf_errors):
    _save(str(tmp_path / "a"), 5)
    os.rename(tmp_path / "a", tmp_path / "b")
    assert tf.train.latest_checkpoint(str(tmp_path / "b")) == str(tmp_path / "b" / "model.ckpt-5")
    assert tf_errors == []


def test_a_state_file_written_with_working_directory_relative_names_is_read_and_rewritten_right(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checkpointer = _save("runs/m", 9)
    with open("runs/m/checkpoint", "w") as f:  # what the earlier version wrote for a relative model_dir
        f.write('model_checkpoint_path: "../../model.ckpt-9"\nall_model_checkpoint_paths: "../../model.ckpt-9"\n')
    assert checkpointer.latest() == "runs/m/model.ckpt-9"
    _save("runs/m", 10)
    assert tf.train.latest_checkpoint("runs/m") == "runs/m/model.ckpt-10"
    assert tf.train.get_checkpoint_state("runs/m").all_model_checkpoint_paths == ["runs/m/model.ckpt-9",
                                                                                  "runs/m/model.ckpt-10"]
