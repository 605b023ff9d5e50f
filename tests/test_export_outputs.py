"""Export outputs and the signature map: tf.estimator 2.15's rules, checked against what the real 2.15 wrote."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from estimators.export import ClassificationOutput, PredictOutput, RegressionOutput
from estimators.export.signatures import build_signatures, export_outputs_for_predict
from tests import export_cases as cases

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "export_signatures_215.json")


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _tensor(dtype=tf.float32, shape=(None, 3)):
    return tf.compat.v1.placeholder(dtype, shape)


# -- the three ExportOutputs ---------------------------------------------------------------------------------


def test_predict_output_names_one_tensor_output(graph):
    logits = _tensor()
    assert PredictOutput(logits).outputs == {"output": logits}


def test_predict_output_joins_tuple_keys_of_multi_head_models(graph):
    logits = _tensor()
    assert list(PredictOutput({("head", "logits"): logits}).outputs) == ["head/logits"]


def test_predict_output_refuses_non_tensor_values_and_non_string_keys(graph):
    with pytest.raises(ValueError, match="Prediction output value must be a Tensor"):
        PredictOutput({"classes": [1, 2]})
    with pytest.raises(ValueError, match="Prediction output key must be a string; got 3"):
        PredictOutput({3: _tensor()})


def test_classification_output_checks_its_dtypes(graph):
    with pytest.raises(ValueError, match="scores must be a float32 Tensor"):
        ClassificationOutput(scores=_tensor(tf.int64))
    with pytest.raises(ValueError, match="classes must be a string Tensor"):
        ClassificationOutput(classes=_tensor(tf.int64))
    with pytest.raises(ValueError, match="needs scores, classes or both"):
        ClassificationOutput()


def test_regression_output_needs_a_float_tensor(graph):
    with pytest.raises(ValueError, match="Regression output value must be a float32 Tensor"):
        RegressionOutput(_tensor(tf.int32))


# -- which export outputs an export has ------------------------------------------------------------------------


def test_no_export_outputs_serves_the_predictions_as_serving_default(graph):
    logits = _tensor()
    (key, output), = export_outputs_for_predict(None, {"logits": logits}).items()
    assert key == "serving_default" and output.outputs == {"logits": logits}


def test_one_export_output_under_another_name_is_also_the_default(graph):
    head = PredictOutput(_tensor())
    assert export_outputs_for_predict({"custom": head}, None) == {"custom": head, "serving_default": head}


def test_several_export_outputs_need_one_named_serving_default(graph):
    with pytest.raises(ValueError, match="none is named 'serving_default'"):
        export_outputs_for_predict({"a": PredictOutput(_tensor()), "b": PredictOutput(_tensor())}, None)


def test_export_outputs_must_be_a_dict_of_export_outputs(graph):
    with pytest.raises(TypeError, match="must be a dict"):
        export_outputs_for_predict([PredictOutput(_tensor())], None)
    with pytest.raises(TypeError, match=r"export_outputs\['a'\] must be an estimators.export.PredictOutput"):
        export_outputs_for_predict({"a": _tensor()}, None)


# -- which signatures they give ---------------------------------------------------------------------------------


def _scores_of(examples, dtype=tf.float32):
    return tf.strings.to_number(examples, dtype)[:, None] * tf.ones([1, 3], dtype)


def test_classify_and_regress_signatures_take_serialized_examples_as_inputs(graph):
    examples = _tensor(tf.string, [None])
    scores = _scores_of(examples)
    outputs = {"serving_default": ClassificationOutput(scores=scores),
               "value": RegressionOutput(tf.reduce_max(scores, 1))}
    signatures = build_signatures({"examples": examples}, outputs, None, [])
    assert signatures["serving_default"].inputs == {"inputs": examples}
    assert signatures["serving_default"].method_name == "tensorflow/serving/classify"
    assert list(signatures["value"].outputs) == ["outputs"]
    assert signatures["value"].method_name == "tensorflow/serving/regress"


def test_a_classify_signature_over_non_string_inputs_is_left_out(graph):
    x = _tensor()
    scores = tf.nn.softmax(x)
    outputs = {"serving_default": PredictOutput(scores), "classify": ClassificationOutput(scores=scores)}
    assert list(build_signatures({"x": x}, outputs, None, [])) == ["serving_default"]


def test_float64_classification_scores_are_left_out_as_unservable(graph):
    examples = _tensor(tf.string, [None])
    outputs = {"serving_default": ClassificationOutput(scores=_scores_of(examples, tf.float64)),
               "float32": ClassificationOutput(scores=_scores_of(examples))}
    assert list(build_signatures({"examples": examples}, outputs, None, [])) == ["float32"]


def test_alternative_receivers_give_signatures_named_group_colon_key(graph):
    examples, x = _tensor(tf.string, [None]), _tensor(shape=(None, 4))
    logits = tf.matmul(x, tf.ones([4, 3]))
    signatures = build_signatures({"examples": examples}, {"serving_default": PredictOutput(logits)},
                                  {"raw": x}, [])
    assert list(signatures) == ["raw:serving_default"]  # logits need x, which the examples signature lacks
    assert signatures["raw:serving_default"].inputs == {"input": x}


# -- the same model_fn exported by TF 2.15 and by us ---------------------------------------------------------------


@pytest.fixture(scope="module")
def reference():
    with open(REFERENCE) as f:
        return json.load(f)["cases"]


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_signatures_match_what_tf_estimator_2_15_exported(case, reference, tmp_path):
    export_dir = cases.export_case(cases.estimators_api(), case, str(tmp_path / "model"), str(tmp_path / "export"))
    assert cases.signature_listing(export_dir) == reference[case]


def test_classify_and_regress_signatures_serve_in_tf_alone(tmp_path):
    api = cases.estimators_api()
    export_dir = cases.export_case(api, "parsing_classify_regress_predict", str(tmp_path / "m"), str(tmp_path / "e"))
    x = cases.dataset(5, seed=2)[0]
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row.tolist()))})).SerializeToString() for row in x]
    np.save(tmp_path / "examples.npy", np.array(examples, dtype=object), allow_pickle=True)
    script = (
        "import numpy as np, tensorflow as tf\n"
        f"signatures = tf.saved_model.load({export_dir!r}).signatures\n"
        f"examples = tf.constant(list(np.load({str(tmp_path / 'examples.npy')!r}, allow_pickle=True)))\n"
        "classified = signatures['serving_default'](inputs=examples)\n"
        "regressed = signatures['regression'](inputs=examples)\n"
        "predicted = signatures['predict'](examples=examples)\n"
        f"np.savez({str(tmp_path / 'out.npz')!r}, scores=classified['scores'].numpy(),\n"
        "         classes=classified['classes'].numpy().astype(str), value=regressed['outputs'].numpy(),\n"
        "         probabilities=predicted['probabilities'].numpy())\n"
    )
    env = dict(os.environ, PYTHONPATH="", TF_CPP_MIN_LOG_LEVEL="2")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=str(tmp_path), env=env, timeout=300)
    out = np.load(tmp_path / "out.npz")
    estimator = api.Estimator(cases.make_model_fn(api, cases._no_heads), model_dir=str(tmp_path / "m"))
    logits = np.stack([p["logits"] for p in estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(5))])
    probabilities = tf.nn.softmax(logits).numpy()
    np.testing.assert_allclose(out["scores"], probabilities, rtol=1e-5)
    np.testing.assert_allclose(out["probabilities"], probabilities, rtol=1e-5)
    np.testing.assert_allclose(out["value"], probabilities.max(axis=1), rtol=1e-5)
    assert out["classes"].tolist() == [list(cases.LABELS)] * 5
