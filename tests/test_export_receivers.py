"""Serving input receivers: tf.estimator 2.15's validation and wrapping, and every kind served without the project."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from estimators.export import (
    ServingInputReceiver,
    TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
)
from tests import export_cases as cases


@pytest.fixture
def graph():
    """Receivers are graph code, as under tf.estimator: placeholders need a graph."""
    with tf.Graph().as_default() as g:
        yield g


def _placeholder(dtype=tf.float32, shape=(None, 4), name=None):
    return tf.compat.v1.placeholder(dtype, shape, name=name)


# -- ServingInputReceiver / TensorServingInputReceiver ------------------------------------------------------


def test_one_feature_tensor_reaches_model_fn_as_a_dict_under_feature(graph):
    x = _placeholder()
    receiver = ServingInputReceiver(x, x)
    assert receiver.features == {"feature": x}
    assert receiver.receiver_tensors == {"input": x}


def test_a_features_dict_stays_a_dict_and_may_have_int_keys(graph):
    x, y = _placeholder(), _placeholder()
    receiver = ServingInputReceiver({"x": x, 1: y}, {"x": x, "y": y})
    assert receiver.features == {"x": x, 1: y}
    assert receiver.receiver_tensors == {"x": x, "y": y}


def test_receiver_tensor_keys_must_be_strings(graph):
    x = _placeholder()
    with pytest.raises(ValueError, match="receiver_tensor keys must be strings: 1"):
        ServingInputReceiver(x, {1: x})


def test_missing_features_or_receiver_tensors_are_named(graph):
    x = _placeholder()
    with pytest.raises(ValueError, match="features must be defined"):
        ServingInputReceiver(None, x)
    with pytest.raises(ValueError, match="receiver_tensors must be defined"):
        ServingInputReceiver(x, None)


def test_a_feature_that_is_not_a_tensor_is_refused_by_name(graph):
    with pytest.raises(ValueError, match=r"feature x must be a Tensor, SparseTensor, or RaggedTensor \(or a tf.Tensor"):
        ServingInputReceiver({"x": [1.0, 2.0]}, _placeholder())


class _LabeledTensorLike:
    """An object with a `.tensor` and a registered tensor conversion (as contrib's LabeledTensor was)."""

    def __init__(self, tensor):
        self.tensor = tensor


tf.register_tensor_conversion_function(_LabeledTensorLike, lambda value, *args, **kwargs: value.tensor)


def test_a_labeled_tensor_like_feature_is_accepted_as_2_15_accepted_it(graph):
    feature = _LabeledTensorLike(tf.constant([1.0]))
    assert ServingInputReceiver({"x": feature}, _placeholder()).features["x"] is feature


def test_sparse_features_are_accepted(graph):
    examples = _placeholder(tf.string, [None])
    features = tf.io.parse_example(examples, {"ids": tf.io.VarLenFeature(tf.int64)})
    assert isinstance(ServingInputReceiver(features, examples).features["ids"], tf.SparseTensor)


def test_receiver_alternatives_must_be_a_dict_and_one_tensor_is_named_input(graph):
    examples, x = _placeholder(tf.string, [None]), _placeholder()
    with pytest.raises(ValueError, match="receiver_tensors_alternatives must be a dict"):
        ServingInputReceiver(x, examples, receiver_tensors_alternatives=x)
    receiver = ServingInputReceiver(x, examples, receiver_tensors_alternatives={"raw": x})
    assert receiver.receiver_tensors_alternatives == {"raw": {"input": x}}


def test_tensor_receiver_passes_its_one_feature_bare(graph):
    x = _placeholder()
    receiver = TensorServingInputReceiver(x, x)
    assert receiver.features is x
    assert receiver.receiver_tensors == {"input": x}


def test_tensor_receiver_refuses_a_features_dict(graph):
    x = _placeholder()
    with pytest.raises(ValueError, match="feature must be a Tensor"):
        TensorServingInputReceiver({"x": x}, x)
    with pytest.raises(ValueError, match="features must be defined"):
        TensorServingInputReceiver(None, x)


# -- build_raw_serving_input_receiver_fn / build_parsing_serving_input_receiver_fn -------------------------------


def test_raw_receiver_from_example_tensors_frees_the_batch_dimension(graph):
    receiver = build_raw_serving_input_receiver_fn({"x": np.zeros([3, 4], np.float32),
                                                    "ids": tf.zeros([3], tf.int64)})()
    assert isinstance(receiver, ServingInputReceiver)
    assert receiver.features == receiver.receiver_tensors
    assert receiver.receiver_tensors["x"].shape.as_list() == [None, 4]
    assert receiver.receiver_tensors["ids"].dtype == tf.int64
    assert receiver.receiver_tensors["ids"].shape.as_list() == [None]


def test_raw_receiver_default_batch_size_fixes_the_batch_dimension(graph):
    receiver = build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 4])}, default_batch_size=8)()
    assert receiver.receiver_tensors["x"].shape.as_list() == [8, 4]


def test_raw_receiver_keeps_a_tensor_specs_shape(graph):
    receiver = build_raw_serving_input_receiver_fn({"images": tf.TensorSpec(None, tf.uint8)})()
    assert receiver.receiver_tensors["images"].shape.rank is None


def test_raw_receiver_of_one_tensor_feeds_model_fn_one_tensor_named_input(graph):
    receiver = build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4]))()
    assert isinstance(receiver, TensorServingInputReceiver)
    assert receiver.receiver_tensors == {"input": receiver.features}


def test_raw_receiver_refuses_what_is_not_a_tensor():
    with pytest.raises(ValueError, match="takes tensors, arrays or tf.TensorSpecs, got str"):
        build_raw_serving_input_receiver_fn({"x": "float32"})


def test_parsing_receiver_takes_serialized_examples_named_examples(graph):
    receiver = build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([4], tf.float32), "ids": tf.io.VarLenFeature(tf.int64)})()
    (examples,) = receiver.receiver_tensors.values()
    assert list(receiver.receiver_tensors) == ["examples"]
    assert examples.dtype == tf.string and examples.shape.as_list() == [None]
    assert receiver.features["x"].shape.as_list() == [None, 4]
    assert isinstance(receiver.features["ids"], tf.SparseTensor)


def test_parsing_receiver_needs_a_feature_spec():
    with pytest.raises(ValueError, match="non-empty dict of feature name"):
        build_parsing_serving_input_receiver_fn({})


# -- every kind exported and served by TF alone --------------------------------------------------------------


def _example(row):
    feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=row.tolist()))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _spec_receiver_with_feature_fn():
    return ServingInputReceiver(features=lambda inputs: {"x": inputs["doubled"] / 2},
                                receiver_tensors={"doubled": tf.TensorSpec([None, 4], tf.float32)})


def _placeholder_tensor_receiver():
    grid = tf.compat.v1.placeholder(tf.float32, [None, 2, 2])
    return TensorServingInputReceiver(tf.reshape(grid, [-1, 4]), grid)


def _alternatives_receiver():
    examples = tf.compat.v1.placeholder(tf.string, [None])
    features = tf.io.parse_example(examples, {"x": tf.io.FixedLenFeature([4], tf.float32)})
    return ServingInputReceiver(features, examples, receiver_tensors_alternatives={"raw": {"x": features["x"]}})


# kind -> (receiver fn, signature, its keyword arguments as code over x and examples, output key)
KINDS = {
    "raw_example_tensors": (build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 4])}),
                            "serving_default", "x=x", "logits"),
    "raw_tensor_specs": (build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 4])}),
                         "serving_default", "x=x", "logits"),
    "raw_single_spec": (build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4])),
                        "serving_default", "input=x", "logits"),
    "parsing": (build_parsing_serving_input_receiver_fn({"x": tf.io.FixedLenFeature([4], tf.float32)}),
                "serving_default", "examples=examples", "logits"),
    "placeholder_tensor_receiver": (_placeholder_tensor_receiver, "serving_default",
                                    "input=tf.reshape(x, [-1, 2, 2])", "logits"),
    "spec_receiver_with_feature_fn": (_spec_receiver_with_feature_fn, "serving_default", "doubled=x * 2", "logits"),
    "alternative_inputs": (_alternatives_receiver, "raw:serving_default", "x=x", "logits"),
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    api = cases.estimators_api()
    estimator = api.Estimator(cases.make_model_fn(api, cases._no_heads), model_dir=str(tmp_path_factory.mktemp("m")))
    return estimator.train(cases.train_input_fn, max_steps=2)


def test_every_kind_of_receiver_serves_predict_s_logits_in_tf_alone(trained, tmp_path):
    x = cases.dataset(6, seed=5)[0]
    expected = np.stack([p["logits"] for p in trained.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(4))])
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "examples.npy", np.array([_example(row) for row in x], dtype=object), allow_pickle=True)
    lines = ["import sys, numpy as np, tensorflow as tf",
             f"x = tf.constant(np.load({str(tmp_path / 'x.npy')!r}))",
             f"examples = tf.constant(list(np.load({str(tmp_path / 'examples.npy')!r}, allow_pickle=True)))",
             "served = {}"]
    for kind, (receiver_fn, signature, arguments, output) in KINDS.items():
        export_dir = trained.export_saved_model(str(tmp_path / kind), receiver_fn).decode()
        lines.append(f"f = tf.saved_model.load({export_dir!r}).signatures[{signature!r}]")
        lines.append(f"served[{kind!r}] = f({arguments})[{output!r}].numpy()")
    lines += ["assert not any(m.split('.')[0] in ('estimators', 'tests') for m in sys.modules)",
              f"np.savez({str(tmp_path / 'served.npz')!r}, **served)"]
    env = dict(os.environ, PYTHONPATH="", TF_CPP_MIN_LOG_LEVEL="2")
    subprocess.run([sys.executable, "-c", "\n".join(lines)], check=True, cwd=str(tmp_path), env=env, timeout=300)
    served = np.load(tmp_path / "served.npz")
    assert sorted(served.files) == sorted(KINDS)
    for kind in KINDS:
        np.testing.assert_allclose(served[kind], expected, rtol=1e-5, atol=1e-6, err_msg=kind)


def test_a_receiver_built_outside_serving_input_receiver_fn_is_refused(trained, tmp_path):
    x = tf.zeros([1, 4])  # eager: no signature can be fed through it

    with pytest.raises(ValueError, match="receiver tensor 'x' was not built inside the export graph"):
        trained.export_saved_model(str(tmp_path), lambda: ServingInputReceiver({"x": x}, {"x": x}))


def test_a_sparse_receiver_tensor_is_refused_with_the_dense_alternative(trained, tmp_path):
    def receiver_fn():
        ids = tf.sparse.from_dense(tf.compat.v1.placeholder(tf.int64, [None, 3]))
        return ServingInputReceiver({"x": tf.zeros([1, 4])}, {"ids": ids})

    with pytest.raises(ValueError, match="'ids' is a SparseTensor; TF2 SavedModel signatures take dense tensors"):
        trained.export_saved_model(str(tmp_path), receiver_fn)


def test_a_tensor_spec_feature_must_be_one_of_the_receiver_tensors(trained, tmp_path):
    def receiver_fn():
        return ServingInputReceiver({"x": tf.TensorSpec([None, 4])}, {"x": tf.TensorSpec([None, 4])})

    with pytest.raises(ValueError, match="not one of receiver_tensors"):
        trained.export_saved_model(str(tmp_path), receiver_fn)


def _echo_model_fn(features, labels, mode):
    """The trained model's logits, plus an "id" feature echoed back (as batch-prediction jobs do). The spec's
    default export output is made again from the new predictions (export_outputs=None): as in 2.15, _replace
    otherwise keeps the one made from the old predictions."""
    spec = cases.make_model_fn(cases.estimators_api(), cases._no_heads)(features, labels, mode)
    if "id" in features:
        spec = spec._replace(predictions={**spec.predictions, "id": features["id"]}, export_outputs=None)
    return spec


def test_predictions_may_echo_an_input_and_inputs_may_go_unused(trained, tmp_path):
    def receiver_fn():
        x, ids = tf.compat.v1.placeholder(tf.float32, [None, 4]), tf.compat.v1.placeholder(tf.string, [None])
        unused = tf.compat.v1.placeholder(tf.int32, [None])
        return ServingInputReceiver({"x": x, "id": ids}, {"x": x, "id": ids, "unused": unused})

    estimator = cases.estimators_api().Estimator(_echo_model_fn, model_dir=trained.model_dir)
    serve = tf.saved_model.load(estimator.export_saved_model(str(tmp_path), receiver_fn).decode()
                                ).signatures["serving_default"]
    out = serve(x=tf.ones([2, 4]), id=tf.constant(["a", "b"]), unused=tf.constant([7, 8]))
    assert out["id"].numpy().tolist() == [b"a", b"b"] and out["logits"].shape == (2, 3)


def test_receiver_keys_tf2_cannot_take_are_renamed_with_a_warning(trained, tmp_path, caplog):
    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        return ServingInputReceiver({"x": x}, {"image/encoded": x, "Raw": x})  # one tensor, two names

    export_dir = trained.export_saved_model(str(tmp_path), receiver_fn).decode()
    assert cases.signature_listing(export_dir)["serving_default"]["inputs"] == {
        "Raw": "float32[-1,4]", "image_encoded": "float32[-1,4]"}
    assert "input 'image/encoded' is named 'image_encoded' in the SavedModel" in caplog.text
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    assert serve(image_encoded=tf.ones([1, 4]), Raw=tf.ones([1, 4]))["logits"].shape == (1, 3)
