"""LatestExporter, FinalExporter and BestExporter: tf.estimator 2.15's export(...) contract and garbage collection."""

import os

import pytest
import tensorflow as tf

from estimators import EvalSpec, TrainSpec, train_and_evaluate
from estimators.export import build_raw_serving_input_receiver_fn
from estimators.train_eval.exporters import (
    BestExporter,
    Exporter,
    FinalExporter,
    LatestExporter,
    _loss_smaller,
    garbage_collect_exports,
    read_eval_results,
    validate_exporters,
)
from tests import export_cases as cases

RECEIVER = build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, cases.FEATURES])})


def _eval_input_fn():
    x, y = cases.dataset(8, seed=4)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)


def _estimator(model_dir):
    api = cases.estimators_api()
    return api.Estimator(cases.make_model_fn(api, cases._no_heads), model_dir=str(model_dir))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return _estimator(tmp_path_factory.mktemp("m")).train(cases.train_input_fn, max_steps=1)


def _versions(path):
    return sorted(name for name in os.listdir(path) if name.isdigit())


def test_latest_exporter_keeps_the_newest_exports_to_keep(trained, tmp_path):
    exporter = LatestExporter("latest", RECEIVER, exports_to_keep=2)
    assert isinstance(exporter, Exporter) and exporter.name == "latest"
    results = [exporter.export(trained, str(tmp_path), trained.latest_checkpoint(), {}, False) for _ in range(3)]
    assert _versions(tmp_path) == [os.path.basename(r.decode()) for r in results[1:]]


def test_garbage_collection_touches_only_ten_digit_version_folders(tmp_path):
    for name in ("1700000001", "1700000002", "1700000003", "temp-1700000004", "123456789", "notes"):
        (tmp_path / name).mkdir()
    garbage_collect_exports(str(tmp_path), 1)
    assert sorted(os.listdir(tmp_path)) == ["123456789", "1700000003", "notes", "temp-1700000004"]


def test_exports_to_keep_none_keeps_every_export(tmp_path):
    for name in ("1700000001", "1700000002"):
        (tmp_path / name).mkdir()
    garbage_collect_exports(str(tmp_path), None)
    assert _versions(tmp_path) == ["1700000001", "1700000002"]


def test_exporter_arguments_are_checked_when_made():
    with pytest.raises(ValueError, match="`exports_to_keep`, if provided, must be a positive number"):
        LatestExporter("latest", RECEIVER, exports_to_keep=0)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        LatestExporter("", RECEIVER)
    with pytest.raises(ValueError, match="needs serving_input_receiver_fn"):
        BestExporter()


def test_final_exporter_exports_only_the_final_evaluation(trained, tmp_path):
    exporter = FinalExporter("final", RECEIVER)
    assert exporter.export(trained, str(tmp_path), trained.latest_checkpoint(), {}, False) is None
    assert not os.path.exists(tmp_path / "final") and os.listdir(tmp_path) == []
    result = exporter.export(trained, str(tmp_path), trained.latest_checkpoint(), {}, True)
    assert _versions(tmp_path) == [os.path.basename(result.decode())]


def test_best_exporter_exports_first_then_only_smaller_losses(trained, tmp_path):
    exporter = BestExporter(serving_input_receiver_fn=RECEIVER, event_file_pattern=None)
    checkpoint = trained.latest_checkpoint()
    assert exporter.export(trained, str(tmp_path), checkpoint, {"loss": 0.5}, False) is not None
    assert exporter.export(trained, str(tmp_path), checkpoint, {"loss": 0.7}, False) is None
    assert exporter.export(trained, str(tmp_path), checkpoint, {"loss": 0.4}, True) is not None
    assert len(_versions(tmp_path)) == 2


def test_best_exporter_uses_a_custom_compare_fn(trained, tmp_path):
    def higher_accuracy(best_eval_result, current_eval_result):
        return current_eval_result["accuracy"] > best_eval_result["accuracy"]

    exporter = BestExporter(serving_input_receiver_fn=RECEIVER, compare_fn=higher_accuracy, event_file_pattern=None)
    checkpoint = trained.latest_checkpoint()
    exporter.export(trained, str(tmp_path), checkpoint, {"accuracy": 0.8}, False)
    assert exporter.export(trained, str(tmp_path), checkpoint, {"accuracy": 0.7}, False) is None
    assert exporter.export(trained, str(tmp_path), checkpoint, {"accuracy": 0.9}, False) is not None


def test_compare_fn_must_take_best_and_current_eval_result():
    with pytest.raises(ValueError, match="must take arguments best_eval_result and current_eval_result"):
        BestExporter(serving_input_receiver_fn=RECEIVER, compare_fn=lambda best, current: True)
    with pytest.raises(ValueError, match=r"unexpected arguments: \['margin'\]"):
        BestExporter(serving_input_receiver_fn=RECEIVER,
                     compare_fn=lambda best_eval_result, current_eval_result, margin: True)


def test_default_compare_needs_a_loss_on_both_sides():
    assert _loss_smaller(best_eval_result={"loss": 0.5}, current_eval_result={"loss": 0.25})
    with pytest.raises(ValueError, match="current_eval_result cannot be empty or without a 'loss'"):
        _loss_smaller(best_eval_result={"loss": 0.5}, current_eval_result={"accuracy": 0.9})


def test_eval_results_are_read_back_from_the_estimators_event_files(tmp_path):
    estimator = _estimator(tmp_path).train(cases.train_input_fn, max_steps=1)
    first = estimator.evaluate(_eval_input_fn)
    second = estimator.train(cases.train_input_fn, max_steps=3).evaluate(_eval_input_fn)
    records = read_eval_results(os.path.join(str(tmp_path), "eval/*.tfevents.*"))
    assert [set(r) for r in records] == [{"loss"}, {"loss"}]
    assert [r["loss"] for r in records] == pytest.approx([first["loss"], second["loss"]], rel=1e-6)


def test_best_exporter_compares_with_the_best_loss_on_record_when_the_model_dir_changes(trained, tmp_path):
    other = _estimator(tmp_path / "other").train(cases.train_input_fn, max_steps=1)
    recorded = other.evaluate(_eval_input_fn)["loss"]
    exporter = BestExporter(serving_input_receiver_fn=RECEIVER)
    export_path = str(tmp_path / "export")
    assert exporter.export(trained, export_path, trained.latest_checkpoint(), {"loss": 100.0}, False) is not None
    checkpoint = other.latest_checkpoint()
    assert exporter.export(other, export_path, checkpoint, {"loss": recorded + 1.0}, False) is None
    assert exporter.export(other, export_path, checkpoint, {"loss": recorded - 1.0}, False) is not None


def test_train_and_evaluate_exports_under_model_dir_export_exporter_name(tmp_path):
    estimator = _estimator(tmp_path)
    exporter = LatestExporter("latest", RECEIVER)
    _, exports = train_and_evaluate(estimator, TrainSpec(cases.train_input_fn, max_steps=2),
                                    EvalSpec(_eval_input_fn, steps=1, exporters=[exporter], throttle_secs=0))
    assert len(exports) == 1  # one checkpoint after the start (the final one), one evaluation, one export
    assert {os.path.dirname(e.decode()) for e in exports} == {os.path.join(str(tmp_path), "export", "latest")}


def test_eval_spec_exporters_may_be_one_exporter_or_several_with_distinct_names():
    latest, best = LatestExporter("latest", RECEIVER), BestExporter(serving_input_receiver_fn=RECEIVER)
    assert validate_exporters(None) == ()
    assert validate_exporters(latest) == (latest,)
    assert validate_exporters([latest, best]) == (latest, best)
    with pytest.raises(ValueError, match="must have unique names"):
        validate_exporters([latest, LatestExporter("latest", RECEIVER)])
    with pytest.raises(TypeError, match="takes an Exporter .* found str"):
        validate_exporters(["latest"])
