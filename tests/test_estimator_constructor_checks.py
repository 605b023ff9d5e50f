"""What Estimator and TPUEstimator check before anything runs, with tf.estimator 2.15's phrases, and what
TPUEstimator(use_tpu=True) checks on the graph path before refusing it (it runs there off the TPU only)."""

import numpy as np
import pytest
import tensorflow as tf

from estimators import Estimator, EstimatorSpec, RunConfig, TPUEstimator, TPUEstimatorSpec


def model_fn_without_params(features, labels, mode):
    loss = tf.reduce_mean(features)
    return EstimatorSpec(mode, loss=loss, train_op=tf.no_op(), predictions={"y": features})


def model_fn_with_params(features, labels, mode, params):
    return model_fn_without_params(features, labels, mode)


def test_config_is_checked_before_model_fn():
    with pytest.raises(ValueError, match="an instance of `RunConfig`"):
        Estimator(model_fn=None, config="NotARunConfig")


def test_params_given_to_a_model_fn_without_params_are_refused():
    Estimator(model_fn_without_params)
    with pytest.raises(ValueError, match="does not include params argument, but params .* are passed to Estimator"):
        Estimator(model_fn_without_params, params={"hidden_layers": 4})


def test_an_argument_the_engine_cannot_fill_is_named_as_2_15_named_it():
    def model_fn(features, labels, something):
        del features, labels, something

    with pytest.raises(ValueError, match=r"has following not expected args: \['something'\]"):
        Estimator(model_fn)


def test_tpu_estimator_takes_params_whatever_model_fn_declares(tmp_path):
    TPUEstimator(model_fn_without_params, model_dir=str(tmp_path), use_tpu=False, train_batch_size=4,
                 params={"hidden_layers": 4})


def test_tpu_estimator_names_a_missing_batch_size_as_2_15_did(tmp_path):
    with pytest.raises(ValueError, match="`train_batch_size` cannot be `None`"):
        TPUEstimator(model_fn_with_params, model_dir=str(tmp_path), use_tpu=True)


# -- TPUEstimator(use_tpu=True) on the graph path ------------------------------------------------------------


def _graph_tpu_estimator(tmp_path, model_fn, **kwargs):
    config = RunConfig(model_dir=str(tmp_path), execution="graph")
    return TPUEstimator(model_fn, config=config, use_tpu=True, **{"train_batch_size": 4, **kwargs})


def _input_fn(params):
    x = np.ones([16, 3], np.float32)
    return tf.data.Dataset.from_tensor_slices((x, x[:, :1])).repeat().batch(params["batch_size"], drop_remainder=True)


@pytest.mark.parametrize(("call", "model_fn", "message"), [
    pytest.param("train", model_fn_with_params, "runs TPUEstimator off the TPU only", id="refused_once_built"),
    pytest.param("evaluate", model_fn_with_params, "eval_batch_size in TPUEstimator constructor cannot be `None`",
                 id="missing_eval_batch_size_named_first"),
    pytest.param("train", None, "does not include params argument, required by TPUEstimator",
                 id="params_argument_required_first"),
])
def test_graph_path_on_a_tpu_runs_2_15s_checks_before_refusing(tmp_path, call, model_fn, message):
    """On the graph path TPUEstimator(use_tpu=True) names what 2.15 would have refused first, then refuses."""
    estimator = _graph_tpu_estimator(tmp_path, model_fn or model_fn_without_params)
    with pytest.raises(ValueError, match=message):
        getattr(estimator, call)(_input_fn, steps=1)


def test_graph_path_on_a_tpu_refuses_features_without_static_shapes_first(tmp_path):
    def input_fn(params):
        x = tf.data.Dataset.from_tensor_slices(np.ones([16, 3], np.float32)).repeat().batch(params["batch_size"],
                                                                                            drop_remainder=True)
        return x.map(lambda f: tf.pad(f, [[0, 0], [0, tf.random.uniform([], 0, 3, tf.int32)]]))

    estimator = _graph_tpu_estimator(tmp_path, model_fn_with_params)
    with pytest.raises(ValueError, match="features to the model returned by input_fn must have static shape"):
        estimator.train(input_fn, steps=1)


def test_graph_path_on_a_tpu_refuses_training_chief_hooks_first(tmp_path):
    def model_fn(features, labels, mode, params):
        spec = model_fn_without_params(features, labels, mode)
        return spec._replace(training_chief_hooks=[tf.compat.v1.train.SessionRunHook()])

    estimator = _graph_tpu_estimator(tmp_path, model_fn)
    with pytest.raises(ValueError, match="training_chief_hooks returned by EstimatorSpec is not supported"):
        estimator.train(_input_fn, steps=1)


def test_graph_path_on_a_tpu_refuses_predictions_without_a_static_batch_first(tmp_path):
    def model_fn(features, labels, mode, params):
        dynamic = tf.compat.v1.placeholder_with_default(features, [None, 3])
        return TPUEstimatorSpec(mode, predictions={"y": dynamic})

    estimator = _graph_tpu_estimator(tmp_path, model_fn, predict_batch_size=4)
    with pytest.raises(ValueError, match="should be static"):
        list(estimator.predict(lambda params: _input_fn(params).map(lambda x, y: x).take(1)))


def test_reserved_tpu_params_are_named_as_2_15_named_them(tmp_path):
    with pytest.raises(ValueError, match="are reserved keys"):
        TPUEstimator(model_fn_with_params, model_dir=str(tmp_path), use_tpu=False, params={"batch_size": 128})


def test_a_tpu_batch_size_that_is_not_an_int_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="must be int"):
        TPUEstimator(model_fn_with_params, model_dir=str(tmp_path), use_tpu=False, train_batch_size=1.0)


@pytest.mark.parametrize("name", ["steps", "max_steps"])
def test_tpu_estimator_trains_whole_steps_only(tmp_path, name):
    estimator = TPUEstimator(model_fn_with_params, model_dir=str(tmp_path), use_tpu=False, train_batch_size=4)
    with pytest.raises(TypeError, match=f"{name} must be int"):
        estimator.train(_input_fn, **{name: 2.5})


def test_a_fractional_step_count_trains_to_the_first_step_past_it_as_2_15s_stop_hook_did(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [3, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
        step = tf.compat.v1.train.get_global_step()
        return EstimatorSpec(mode, loss=loss, train_op=tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=step))

    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: _input_fn({"batch_size": 4}), steps=2.5)
    assert estimator.get_variable_value("global_step") == 3


def test_model_dir_in_constructor_and_config_differing_is_2_15s_error(tmp_path):
    with pytest.raises(ValueError, match="`model_dir` are set both in constructor and `RunConfig`, but with different "
                                         "values"):
        Estimator(model_fn_without_params, model_dir=str(tmp_path / "a"), config=RunConfig(model_dir=str(tmp_path)))


def test_warm_start_settings_are_kept_as_2_15s_attribute(tmp_path):
    estimator = Estimator(model_fn_without_params, warm_start_from=str(tmp_path))
    assert estimator._warm_start_settings.ckpt_to_initialize_from == str(tmp_path)
    assert Estimator(model_fn_without_params)._warm_start_settings is None
