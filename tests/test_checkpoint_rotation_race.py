"""Readers beside a trainer that rotates checkpoints away (issue 17, item 7).

A trainer keeping keep_checkpoint_max checkpoints deletes the oldest at each save, so an evaluator's chosen
checkpoint can vanish between choosing and reading it. That is not damage (never CheckpointCorruptError),
and Checkpointer.read_newest() reads the newest one instead, as tf.estimator's continuous evaluation did.
The race is made deterministic by rotating inside the reader's first read.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import tensorflow as tf

from estimators.checkpoint import checkpointer as checkpointer_module
from estimators.checkpoint.checkpointer import (
    CheckpointCorruptError,
    Checkpointer,
    CheckpointGoneError,
)


def _variables(step: int) -> dict[str, tf.Variable]:
    return {"global_step": tf.Variable(step, dtype=tf.int64),
            "dense/kernel": tf.Variable(np.full((3, 2), step, np.float32))}


def _restored_step(reader: Checkpointer, path: str) -> int:
    """What an evaluator does with a checkpoint: restore every variable; returns the step it holds."""
    fresh = _variables(0)
    reader.restore(path, fresh)
    return int(fresh["global_step"].numpy())


def _trainer(model_dir: str, *steps: int) -> Checkpointer:
    trainer = Checkpointer(model_dir, max_to_keep=1)
    for step in steps:
        trainer.save(_variables(step), step)
    return trainer


def test_a_checkpoint_rotated_away_before_it_is_read_is_gone_not_corrupt(tmp_path):
    trainer = _trainer(str(tmp_path), 1)
    reader = Checkpointer(str(tmp_path), is_chief=False)
    chosen = reader.latest()
    trainer.save(_variables(2), 2)  # keep_checkpoint_max=1: model.ckpt-1 is deleted
    with pytest.raises(CheckpointGoneError, match=r"model\.ckpt-1 no longer exists.*not damaged") as raised:
        _restored_step(reader, chosen)
    assert not isinstance(raised.value, CheckpointCorruptError)


def test_a_checkpoint_rotated_away_while_its_values_are_read_is_gone_not_corrupt(tmp_path, monkeypatch):
    trainer = _trainer(str(tmp_path), 1)
    reader = Checkpointer(str(tmp_path), is_chief=False)
    chosen = reader.latest()
    opened = checkpointer_module._reader

    def open_then_rotate(path):  # the reader has the index open when the trainer rotates the files away
        opened_reader = opened(path)
        if path == chosen:
            monkeypatch.setattr(checkpointer_module, "_reader", opened)
            trainer.save(_variables(2), 2)
        return opened_reader

    monkeypatch.setattr(checkpointer_module, "_reader", open_then_rotate)
    with pytest.raises(CheckpointGoneError):
        _restored_step(reader, chosen)


def test_read_newest_reads_the_newest_checkpoint_when_the_chosen_one_is_rotated_away(tmp_path):
    trainer = _trainer(str(tmp_path), 1)
    reader = Checkpointer(str(tmp_path), is_chief=False)
    attempts = []

    def read(path: str) -> int:
        attempts.append(path.rsplit("/", 1)[1])
        if len(attempts) == 1:  # between choosing and reading, the trainer saves twice
            trainer.save(_variables(2), 2)
            trainer.save(_variables(3), 3)
        return _restored_step(reader, path)

    assert reader.read_newest(read) == 3
    assert attempts == ["model.ckpt-1", "model.ckpt-3"]


def test_read_newest_raises_a_read_failure_of_an_existing_checkpoint_as_is(tmp_path):
    _trainer(str(tmp_path), 1)
    reader = Checkpointer(str(tmp_path), is_chief=False)

    def read(path: str) -> int:
        raise KeyError("a model that does not match")

    with pytest.raises(KeyError):
        reader.read_newest(read)


def test_read_newest_gives_up_with_one_error_when_every_checkpoint_is_rotated_away_before_it_is_read(tmp_path):
    trainer = _trainer(str(tmp_path), 1)
    reader = Checkpointer(str(tmp_path), is_chief=False)
    saved = iter(range(2, 100))

    def read_after_rotation(path: str) -> int:  # the trainer saves (and rotates) before every read
        step = next(saved)
        trainer.save(_variables(step), step)
        return _restored_step(reader, path)

    with pytest.raises(CheckpointGoneError, match=r"5 checkpoints in a row were deleted .*keep_checkpoint_max"):
        reader.read_newest(read_after_rotation)


def test_evaluators_racing_a_rotating_trainer_never_fail(tmp_path):
    trainer = _trainer(str(tmp_path), 1)
    saved = {1}
    done = threading.Event()

    def train() -> None:
        for step in range(2, 80):
            trainer.save(_variables(step), step)
            saved.add(step)
        done.set()

    def evaluate(results: list, errors: list) -> None:
        reader = Checkpointer(str(tmp_path), is_chief=False)
        while not done.is_set():
            try:
                results.append(reader.read_newest(lambda path: _restored_step(reader, path)))
            except Exception as err:  # noqa: BLE001 - every failure is the finding
                errors.append(f"{type(err).__name__}: {err}")

    records = [([], []), ([], [])]
    threads = [threading.Thread(target=train)] + [threading.Thread(target=evaluate, args=r) for r in records]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    errors = [e for _, errs in records for e in errs]
    results = [r for res, _ in records for r in res]
    print(f"evaluations: {len(results)}, failed: {len(errors)}")
    assert errors == [] and results
    assert set(results) <= saved


def test_estimator_evaluate_reads_the_newest_checkpoint_when_a_trainer_rotates_its_choice_away(tmp_path):
    """evaluate() chose model.ckpt-2; before it restores, a trainer (keep_checkpoint_max=1) saves step 4 and
    deletes ckpt-2: evaluate() evaluates ckpt-4 instead of failing (as 2.15's continuous evaluation did)."""
    import estimators

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        x = np.ones([4, 1], np.float32)
        return tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(2)

    def repeated():
        return input_fn().repeat()

    config = estimators.RunConfig(model_dir=str(tmp_path), keep_checkpoint_max=1, save_checkpoints_steps=2)
    trainer = estimators.Estimator(model_fn, config=config)
    trainer.train(repeated, max_steps=2)
    evaluator = estimators.Estimator(model_fn, config=config)
    evaluate_at, rotated = evaluator._evaluate_at, []

    def rotating_first(input_fn, steps, hooks, path, name):
        if not rotated:
            rotated.append(path)
            trainer.train(repeated, max_steps=4)  # saves ckpt-4, rotates ckpt-2 away
        return evaluate_at(input_fn, steps, hooks, path, name)

    evaluator._evaluate_at = rotating_first
    results = evaluator.evaluate(input_fn)
    assert rotated == [f"{tmp_path}/model.ckpt-2"]
    assert results["global_step"] == 4
