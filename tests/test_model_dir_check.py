"""The model_dir check before train: writes nothing it leaves behind, deletes nothing it did not write."""

import os

import tensorflow as tf

from estimators.checkpoint.model_dir_check import check_model_dir


def test_a_missing_model_dir_is_checked_writable_and_left_absent(tmp_path):
    check_model_dir(str(tmp_path / "a" / "run"), write=True)
    assert os.listdir(tmp_path) == []


def test_the_check_keeps_a_folder_it_created_when_another_process_wrote_into_it(tmp_path, monkeypatch):
    model_dir = tmp_path / "run"
    makedirs = tf.io.gfile.makedirs

    def makedirs_then_another_worker_writes(path):
        makedirs(path)
        (model_dir / "checkpoint").write_text("another process's file")

    monkeypatch.setattr(tf.io.gfile, "makedirs", makedirs_then_another_worker_writes)
    check_model_dir(str(model_dir), write=True)
    assert os.listdir(model_dir) == ["checkpoint"]
