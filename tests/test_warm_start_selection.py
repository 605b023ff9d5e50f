"""Warm starting selects exactly what tf.estimator 2.15 selected, and says clearly what it cannot do.

tests/data/warm_start_reference_tf215.json was recorded by the real TF 2.15 + tensorflow-estimator 2.15
(tests/data/make_warm_start_reference.py): per settings, which checkpoint tensor each variable of a
dense -> BatchNorm -> dense model with Adam got. Here the same settings go through warm_start.plan()
and Checkpointer.restore() on the same names, shapes and tag values, and must give the same result.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess

import numpy as np
import pytest
import tensorflow as tf

from estimators.checkpoint import warm_start
from estimators.checkpoint.checkpointer import Checkpointer, CheckpointMismatchError
from estimators.checkpoint.warm_start import WarmStartSettings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE_FILE = os.path.join(ROOT, "tests", "data", "warm_start_reference_tf215.json")
REFERENCE_PYTHON = "/work/ref215/bin/python"  # TF 2.15.1 + tensorflow-estimator 2.15.0, where present
with open(REFERENCE_FILE) as f:
    REFERENCE = json.load(f)


@pytest.fixture(scope="module")
def source_dir(tmp_path_factory) -> str:
    """A name-based checkpoint with the reference's names, shapes, dtypes and tag values."""
    folder = str(tmp_path_factory.mktemp("warm_start_source"))
    values = {name: tf.Variable(np.full(spec["shape"], spec["tag"], spec["dtype"]))
              for name, spec in REFERENCE["checkpoint"].items()}
    Checkpointer(folder).save(values, step=0)
    return folder


def _fresh_model(names: list[str] | None = None) -> dict[str, tf.Variable]:
    """The reference model's variables in creation order, all zeros (so a warm-started one shows its tag)."""
    return {spec["name"]: tf.Variable(np.zeros(spec["shape"], spec["dtype"]), trainable=spec["trainable"])
            for spec in REFERENCE["variables"] if names is None or spec["name"] in names}


def _origins(model: dict[str, tf.Variable]) -> dict[str, str]:
    """{variable: checkpoint tensor its value came from}, read off the distinct tag values."""
    by_tag = {spec["tag"]: name for name, spec in REFERENCE["checkpoint"].items()}
    found = {}
    for name, var in model.items():
        value = float(np.ravel(var.numpy())[0])
        if value in by_tag:
            found[name] = by_tag[value]
    return found


def _warm_start(settings: WarmStartSettings, model: dict[str, tf.Variable]) -> None:
    path, assignments = warm_start.plan(settings, model)
    Checkpointer(os.path.dirname(path), is_chief=False).restore(path, assignments)


SELECTION_CASES = {k: v for k, v in REFERENCE["cases"].items() if "variables" not in v}


@pytest.mark.parametrize("case", sorted(SELECTION_CASES))
def test_selection_matches_tf_estimator_2_15(case, source_dir):
    expected = SELECTION_CASES[case]
    model = _fresh_model()
    if "error" in expected:  # 2.15 raised ValueError for these: so do we, and nothing is assigned
        with pytest.raises(ValueError):
            _warm_start(WarmStartSettings(source_dir, **expected["settings"]), model)
        assert _origins(model) == {}
    else:
        _warm_start(WarmStartSettings(source_dir, **expected["settings"]), model)
        assert _origins(model) == expected["warm_started"]


def test_default_warm_start_skips_batch_norm_statistics_and_global_step_like_a_real_estimator(source_dir):
    """Recorded through tf.estimator.Estimator(warm_start_from=<directory>).predict() in 2.15."""
    expected = REFERENCE["cases"]["estimator_predict_warm_start_from_directory"]
    model = _fresh_model(expected["variables"])
    _warm_start(warm_start.settings_from(source_dir), model)
    assert _origins(model) == expected["warm_started"]
    assert {"batch_normalization/moving_mean", "batch_normalization/moving_variance", "global_step"} == (
        set(model) - set(expected["warm_started"])) == set(expected["not_warm_started"])


@pytest.mark.skipif(not os.path.exists(REFERENCE_PYTHON), reason="no TF 2.15 reference environment here")
def test_recorded_reference_is_what_tf_2_15_does(tmp_path):
    done = subprocess.run([REFERENCE_PYTHON, os.path.join(ROOT, "tests", "data", "make_warm_start_reference.py")],
                          capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = json.loads(done.stdout)
    for case, recorded in REFERENCE["cases"].items():
        assert fresh["cases"][case].get("warm_started") == recorded.get("warm_started"), case
        assert ("error" in fresh["cases"][case]) == ("error" in recorded), case


def test_settings_have_tf_estimator_fields_and_defaults():
    settings = WarmStartSettings("/some/checkpoint")
    assert settings._fields == ("ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
                                "var_name_to_prev_var_name")
    assert tuple(settings) == ("/some/checkpoint", ".*", {}, {})
    with pytest.raises(ValueError, match="ckpt_to_initialize_from"):
        WarmStartSettings("")


def test_vocab_infos_are_refused_off_the_graph_path_with_a_way_out():
    settings = WarmStartSettings("/ckpt", var_name_to_vocab_info={"embedding": object()})  # the graph path remaps
    with pytest.raises(ValueError, match=r"var_name_to_vocab_info=\.\.\.\) is not supported.*load_variable"):
        warm_start.plan(settings, {})


def test_warm_start_from_a_saved_model_directory_reads_its_variables(tmp_path):
    export = tmp_path / "export" / "1700000000"
    (export / "variables").mkdir(parents=True)
    (export / "variables" / "variables.index").write_bytes(b"")
    assert warm_start.settings_from(str(export)).ckpt_to_initialize_from == str(export / "variables" / "variables")
    assert warm_start.settings_from(str(tmp_path)).ckpt_to_initialize_from == str(tmp_path)
    with pytest.raises(ValueError, match="path string or a WarmStartSettings"):
        warm_start.settings_from(42)


def test_a_directory_means_its_latest_checkpoint_and_a_prefix_itself(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    for step in (1, 2):
        checkpointer.save({"global_step": tf.Variable(step, dtype=tf.int64)}, step)
    assert warm_start.checkpoint_path(WarmStartSettings(str(tmp_path))) == str(tmp_path / "model.ckpt-2")
    prefix = str(tmp_path / "model.ckpt-1")
    assert warm_start.checkpoint_path(WarmStartSettings(prefix)) == prefix


def test_nothing_to_warm_start_from_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="No checkpoint to warm-start from in directory"):
        warm_start.checkpoint_path(WarmStartSettings(str(tmp_path)))
    with pytest.raises(ValueError, match="no .*model.ckpt-9.index, and not a directory"):
        warm_start.checkpoint_path(WarmStartSettings(str(tmp_path / "model.ckpt-9")))


def test_a_missing_checkpoint_tensor_is_one_error_naming_it(source_dir):
    settings = WarmStartSettings(source_dir, var_name_to_prev_var_name={"dense/bias": "nope/bias"})
    with pytest.raises(CheckpointMismatchError, match=r"1 missing: nope/bias\."):
        _warm_start(settings, _fresh_model())


def test_a_pattern_that_selects_nothing_is_reported(source_dir, caplog):
    with caplog.at_level(logging.WARNING, logger="absl"):
        _warm_start(WarmStartSettings(source_dir, vars_to_warm_start="dense/kernel$"), _fresh_model())
    assert "'dense/kernel$' selects no variable" in caplog.text and "':0$'" in caplog.text


def test_object_based_checkpoints_are_read_through_their_object_graph(tmp_path):
    """tf.train.Checkpoint keys are object paths; 2.15 found variables by their names in the object graph."""
    kernel = tf.Variable(np.full([3, 2], 7.0, np.float32), name="dense/kernel")
    path = tf.train.Checkpoint(model={"layer": {"w": kernel}}).write(str(tmp_path / "object" / "ckpt-1"))
    model = {"dense/kernel": tf.Variable(np.zeros([3, 2], np.float32))}
    _, assignments = warm_start.plan(WarmStartSettings(path), model)
    assert list(assignments) == ["model/layer/w/.ATTRIBUTES/VARIABLE_VALUE"]
    Checkpointer(str(tmp_path), is_chief=False).restore(path, assignments)
    np.testing.assert_array_equal(model["dense/kernel"].numpy(), np.full([3, 2], 7.0))


def test_object_based_checkpoint_without_a_selected_variable_is_an_error(tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable(1.0, name="other")).write(str(tmp_path / "ckpt-1"))
    with pytest.raises(ValueError, match="object-based checkpoint that has no value for 1 selected.*dense/kernel"):
        warm_start.plan(WarmStartSettings(path), {"dense/kernel": tf.Variable(np.zeros([3, 2], np.float32))})


def test_warm_start_fills_every_replica_of_mirrored_variables(eight_replicas, source_dir):
    with eight_replicas.scope():
        model = _fresh_model(["dense/kernel", "batch_normalization/moving_mean"])
    _warm_start(WarmStartSettings(source_dir, vars_to_warm_start=[".*"]), model)
    tags = REFERENCE["checkpoint"]
    for name, var in model.items():
        assert len(var.values) == 8
        for replica_value in var.values:
            np.testing.assert_array_equal(replica_value.numpy(), np.full(tags[name]["shape"], tags[name]["tag"]))


def test_selection_is_pure_and_uses_variable_trainable_flags():
    model = {"a/kernel": tf.Variable(1.0), "a/moving_mean": tf.Variable(2.0, trainable=False)}
    assert warm_start.select(WarmStartSettings("unused"), model) == {"a/kernel": model["a/kernel"]}
    assert warm_start.select(WarmStartSettings("unused"), model, trainable={"a/moving_mean"}) == {
        "a/moving_mean": model["a/moving_mean"]}

