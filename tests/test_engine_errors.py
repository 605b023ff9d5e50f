"""Bad input gets one clear error that names the problem and the fix."""

import keras
import pytest
import tensorflow as tf

from estimators import CrossShardOptimizer, ModeKeys, RunConfig, TPUConfig, TPUEstimator, TPUEstimatorSpec
from estimators.distribute.strategy import NoTPUError
from tests import engine_models as m


def _estimator(tmp_path, model_fn=m.linear_model_fn, strategy=None, **kwargs):
    config = RunConfig(model_dir=str(tmp_path), train_distribute=strategy, tpu_config=TPUConfig(iterations_per_loop=2))
    sizes = dict(train_batch_size=16, eval_batch_size=16, predict_batch_size=16)
    sizes.update(kwargs)
    return TPUEstimator(model_fn, config=config, use_tpu=False, **sizes)


def test_global_batch_that_does_not_divide_by_replicas_names_both_numbers(tmp_path, eight_replicas):
    x, y = m.dataset(64)
    with pytest.raises(ValueError, match=r"train_batch_size=12 does not divide by the 8 replicas"):
        _estimator(tmp_path, strategy=eight_replicas, train_batch_size=12).train(m.train_input_fn(x, y), max_steps=1)


def test_unknown_batch_dimension_suggests_drop_remainder(tmp_path):
    x, y = m.dataset(64)

    def input_fn(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params["batch_size"])

    with pytest.raises(ValueError, match=r"unknown batch dimension.*drop_remainder=True"):
        _estimator(tmp_path).train(input_fn, max_steps=1)


def _model_fn_returning(**spec_fields):
    def model_fn(features, labels, mode, params):
        logits = m.linear_model()(features)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        fields = {"loss": loss, "train_op": CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss)}
        fields.update(spec_fields)
        return TPUEstimatorSpec(mode, **fields)

    return model_fn


def test_train_without_loss_says_set_loss(tmp_path):
    x, y = m.dataset(64)
    with pytest.raises(ValueError, match=r"no loss in TRAIN mode; set loss="):
        _estimator(tmp_path, _model_fn_returning(loss=None)).train(m.train_input_fn(x, y), max_steps=1)


def test_train_without_train_op_says_return_one(tmp_path):
    x, y = m.dataset(64)
    with pytest.raises(ValueError, match=r"no train_op in TRAIN mode.*CrossShardOptimizer"):
        _estimator(tmp_path, _model_fn_returning(train_op=None)).train(m.train_input_fn(x, y), max_steps=1)


def test_bare_keras_optimizer_under_several_replicas_is_refused(tmp_path, eight_replicas):
    def model_fn(features, labels, mode):
        model = m.linear_model()
        logits = model(features)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        variables = [v.value for v in model.trainable_variables]
        optimizer = keras.optimizers.SGD(0.1)
        train_op = optimizer.apply_gradients(zip(tf.gradients(loss, variables), variables, strict=True))
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    x, y = m.dataset(64)
    with pytest.raises(ValueError, match=r"bare SGD under 8 replicas.*8 times too large.*CrossShardOptimizer"):
        _estimator(tmp_path, model_fn, strategy=eight_replicas).train(m.train_input_fn(x, y), max_steps=1)


def test_model_fn_with_an_unknown_argument_is_refused(tmp_path):
    def model_fn(features, labels, mode, hparams):
        raise AssertionError("never called")

    with pytest.raises(ValueError, match=r"argument 'hparams'"):
        _estimator(tmp_path, model_fn)


def test_reserved_batch_size_param_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"params\['batch_size'\] is reserved"):
        TPUEstimator(m.linear_model_fn, model_dir=str(tmp_path), params={"batch_size": 8}, use_tpu=False)


def test_evaluate_before_any_training_runs_on_initial_weights_as_tf_estimator_did(tmp_path, caplog):
    x, y = m.dataset(16)
    with caplog.at_level("WARNING", logger="absl"):
        result = _estimator(tmp_path).evaluate(m.eval_input_fn(x, y))
    assert result["global_step"] == 0 and result["examples"] == 16
    assert "Could not find a trained model" in caplog.text


def test_use_tpu_without_a_tpu_is_one_clear_error(tmp_path):
    estimator = TPUEstimator(m.linear_model_fn, model_dir=str(tmp_path), use_tpu=True, train_batch_size=8)
    x, y = m.dataset(16)
    with pytest.raises(NoTPUError, match=r"no TPU devices.*drop --use_tpu"):
        estimator.train(m.train_input_fn(x, y), max_steps=1)


def test_unreachable_tpu_address_fails_fast(tmp_path):
    config = RunConfig(model_dir=str(tmp_path), master="grpc://127.0.0.1:1")
    estimator = TPUEstimator(m.linear_model_fn, config=config, use_tpu=True, train_batch_size=8)
    x, y = m.dataset(16)
    with pytest.raises(NoTPUError, match=r"did not answer on 127.0.0.1:1"):
        estimator.train(m.train_input_fn(x, y), max_steps=1)


def test_nan_loss_stops_training_without_a_checkpoint(tmp_path):
    x, y = m.dataset(64)
    x[5, 0] = float("nan")
    estimator = _estimator(tmp_path)
    with pytest.raises(FloatingPointError, match=r"Loss became nan"):
        estimator.train(m.train_input_fn(x, y), max_steps=4)
    assert estimator.latest_checkpoint() is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"save_checkpoints_steps": 10, "save_checkpoints_secs": 10}, "at most one of"),
        ({"keep_checkpoint_max": -1}, "keep_checkpoint_max"),
        ({"log_step_count_steps": 0}, "log_step_count_steps must be a positive integer"),
    ],
)
def test_run_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**kwargs)


def test_iterations_per_loop_must_be_positive():
    with pytest.raises(ValueError, match=r"iterations_per_loop must be a positive integer .*got 0"):
        TPUConfig(iterations_per_loop=0)


def test_mode_keys_match_tf_estimator():
    assert (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT) == ("train", "eval", "infer")


def test_a_plain_estimator_on_a_tpu_strategy_points_to_tpu_estimator(tmp_path, monkeypatch):
    # No TPU here: the TPUStrategy check is faked; what is tested is that the global-batch input_fn
    # contract is refused on a TPU before any input or model is built.
    from estimators import Estimator
    from estimators.distribute import deployment

    monkeypatch.setattr(deployment, "is_tpu_strategy", lambda strategy: True)
    x, y = m.dataset(32)
    estimator = Estimator(m.keras_metrics_model_fn, config=RunConfig(model_dir=str(tmp_path)))
    with pytest.raises(ValueError, match=r"plain Estimator cannot run on a TPUStrategy.*TPUEstimator"):
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(8), steps=1)
    assert not list(tmp_path.iterdir())


def test_keras_optimizer_made_outside_model_fn_is_refused_before_anything_is_saved(tmp_path):
    """Its step count is no variable of model_fn's: a checkpoint would lack it, and a resumed Adam would differ."""
    optimizer = keras.optimizers.Adam(0.1)

    def model_fn(features, labels, mode):
        model = m.linear_model()
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, model(features), from_logits=True))
        variables = [v.value for v in model.trainable_variables]
        train_op = optimizer.apply_gradients(zip(tf.gradients(loss, variables), variables, strict=True))
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    x, y = m.dataset(64)
    with pytest.raises(ValueError, match=r"applied Adam, an optimizer made outside model_fn.*start it at 0 again"
                                         r".*Make the optimizer inside model_fn"):
        _estimator(tmp_path, model_fn).train(m.train_input_fn(x, y), max_steps=2)
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert int(optimizer.iterations.numpy()) == 0


def test_a_keras_model_built_outside_model_fn_is_refused_before_anything_is_saved(tmp_path):
    """Its weights are no variables of model_fn's: they would train, but no checkpoint would hold them."""
    model = keras.Sequential([keras.Input((m.FEATURES,)), keras.layers.Dense(m.CLASSES)])  # built here, not in a call

    def model_fn(features, labels, mode):
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, model(features), from_logits=True))
        train_op = CrossShardOptimizer(keras.optimizers.SGD(0.1)).minimize(loss, var_list=model.trainable_variables)
        return TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    x, y = m.dataset(64)
    before = [v.numpy().copy() for v in model.weights]
    with pytest.raises(ValueError, match=r"used trainable variables it did not make \(.*kernel.*\).*would train "
                                         r"without being saved.*Build the model inside model_fn"):
        _estimator(tmp_path, model_fn).train(m.train_input_fn(x, y), max_steps=2)
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert all((v.numpy() == b).all() for v, b in zip(model.weights, before, strict=True))
