"""model_fns, input_fns and runs shared by the compat tests and the TF 2.15 reference script.

The same code runs under the real tf.estimator 2.15 (tests/reference/make_compat_215.py writes
tests/reference/compat_215.json) and under `estimators` (tests/test_compat_*.py); only `api` differs:
a namespace with Estimator, TPUEstimator, RunConfig, TPUConfig, EstimatorSpec, TPUEstimatorSpec,
ModeKeys, CrossShardOptimizer, TrainSpec, EvalSpec and train_and_evaluate. Every variable has a
constant initial value, so both start from the same weights. Only TF1-style APIs that exist in
TF 2.15 and in TF >= 2.16 are used, and no Keras (2.15 has Keras 2, this project Keras 3).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
ENGINE_ONLY_KEYS = ("estimators/input_position",)  # what this project's checkpoints hold beyond 2.15's

FEATURES = 3
CLASSES = 3
BATCH = 16
W0 = np.array([[0.2, -0.3, 0.1], [-0.1, 0.4, -0.2], [0.3, 0.1, -0.4]], np.float32)
B0 = np.array([0.05, -0.05, 0.0], np.float32)


# -- data and input_fns ---------------------------------------------------------------------------------
def classification_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n rows of FEATURES floats; noisy argmax labels, so the loss never reaches zero."""
    rng = np.random.RandomState(seed)
    x = rng.randn(n, FEATURES).astype(np.float32)
    y = np.argmax(x + 0.5 * rng.randn(n, FEATURES), axis=1).astype(np.int32)
    return x, y


def repeated_input_fn(x: Any, y: Any = None):
    """Endless batches of params['batch_size'] (features only when y is None)."""

    def input_fn(params):
        data = (x, y) if y is not None else x
        return tf.data.Dataset.from_tensor_slices(data).repeat().batch(params["batch_size"], drop_remainder=True)

    return input_fn


def one_pass_input_fn(x: Any, y: Any = None, drop_remainder: bool = False):
    """The data once, in batches of params['batch_size'] (features only when y is None)."""

    def input_fn(params):
        data = (x, y) if y is not None else x
        return tf.data.Dataset.from_tensor_slices(data).batch(params["batch_size"], drop_remainder=drop_remainder)

    return input_fn


def checkpoint_values(model_dir: str) -> dict[str, list]:
    """{name: value as nested lists} of everything in model_dir's latest checkpoint."""
    path = tf.train.latest_checkpoint(model_dir)
    return {name: np.asarray(tf.train.load_variable(path, name)).tolist() for name, _ in tf.train.list_variables(path)}


def tpu_estimator(api: Any, model_fn, model_dir: str, iterations: int = 3, params: dict | None = None,
                   batch: int = BATCH, **config):
    run_config = api.RunConfig(model_dir=model_dir, save_checkpoints_steps=1000,
                               tpu_config=api.TPUConfig(iterations_per_loop=iterations), **config)
    return api.TPUEstimator(model_fn, config=run_config, params=params, use_tpu=False, train_batch_size=batch,
                            eval_batch_size=batch, predict_batch_size=batch)


def _estimator(api: Any, model_fn, model_dir: str, batch: int = BATCH, **config):
    run_config = api.RunConfig(model_dir=model_dir, save_checkpoints_steps=1000, **config)
    return api.Estimator(model_fn, config=run_config, params={"batch_size": batch})


# -- a linear softmax classifier with get_variable --------------------------------------------------------
def linear_logits(features: tf.Tensor) -> tf.Tensor:
    with v1.variable_scope("linear"):
        w = v1.get_variable("w", [FEATURES, CLASSES], initializer=v1.constant_initializer(W0))
        b = v1.get_variable("b", [CLASSES], initializer=v1.constant_initializer(B0))
    return tf.matmul(features, w) + b


def mean_cross_entropy(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


# -- point 5: tf.compat.v1 optimizers, bare or in CrossShardOptimizer ----------------------------------------
# name: (factory, how the model_fn applies it). Both TF1 signatures are exercised: minimize(loss, global_step)
# positionally, and compute_gradients + apply_gradients(grads_and_vars, global_step).
V1_OPTIMIZERS = {
    "gradient_descent": (lambda: v1.train.GradientDescentOptimizer(0.5), "minimize"),
    "momentum": (lambda: v1.train.MomentumOptimizer(0.2, momentum=0.9), "minimize"),
    "adam": (lambda: v1.train.AdamOptimizer(0.05), "compute_apply"),
    "adagrad": (lambda: v1.train.AdagradOptimizer(0.3), "minimize"),
    "rmsprop": (lambda: v1.train.RMSPropOptimizer(0.05, momentum=0.5), "compute_apply"),
}
OPTIMIZER_STEPS = 6
OPTIMIZER_ROWS = 96


def optimizer_model_fn(api: Any, optimizer: str, cross_shard: bool):
    make, style = V1_OPTIMIZERS[optimizer]

    def model_fn(features, labels, mode, params):
        logits = linear_logits(features)
        if mode == api.ModeKeys.PREDICT:
            return api.TPUEstimatorSpec(mode, predictions={"logits": logits})
        loss = mean_cross_entropy(labels, logits)
        if mode != api.ModeKeys.TRAIN:
            return api.TPUEstimatorSpec(mode, loss=loss)
        opt = make()
        if cross_shard:
            opt = api.CrossShardOptimizer(opt)
        global_step = v1.train.get_global_step()
        if style == "minimize":
            train_op = opt.minimize(loss, global_step)  # TF1's signature: the second argument is global_step
        else:
            train_op = opt.apply_gradients(opt.compute_gradients(loss), global_step)
        return api.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def run_optimizer(api: Any, model_dir: str, optimizer: str, cross_shard: bool = False, **config) -> dict:
    """OPTIMIZER_STEPS steps of global batch 16 (iterations_per_loop 3); returns the checkpoint's values."""
    x, y = classification_data(OPTIMIZER_ROWS)
    estimator = tpu_estimator(api, optimizer_model_fn(api, optimizer, cross_shard), model_dir, **config)
    estimator.train(repeated_input_fn(x, y), max_steps=OPTIMIZER_STEPS)
    return checkpoint_values(model_dir)


# -- point 4: the global step model_fn sees, and learning-rate schedules ----------------------------------
SCHEDULE_STEPS = 10
SCHEDULES = {
    "exponential_decay": lambda step: v1.train.exponential_decay(0.1, step, 3, 0.5),
    "exponential_decay_staircase": lambda step: v1.train.exponential_decay(0.1, step, 3, 0.5, staircase=True),
    "piecewise_constant": lambda step: v1.train.piecewise_constant(step, [3, 6], [0.1, 0.05, 0.01]),
    "cosine_decay": lambda step: v1.train.cosine_decay(0.1, step, SCHEDULE_STEPS),
    "polynomial_decay": lambda step: v1.train.polynomial_decay(0.1, step, 8, 0.01, power=2.0),
    # Keras LearningRateSchedules called with the global step (Keras 2 under 2.15, Keras 3 here).
    "keras_exponential_decay": lambda step: tf.keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5)(step),
    "keras_cosine_decay": lambda step: tf.keras.optimizers.schedules.CosineDecay(0.1, SCHEDULE_STEPS)(step),
}


def schedule_formula(schedule: str, step: int) -> float:
    """The closed form of SCHEDULES[schedule] at `step` (what the TF1 docs define)."""
    if schedule in ("exponential_decay", "keras_exponential_decay"):
        return 0.1 * 0.5 ** (step / 3)
    if schedule == "exponential_decay_staircase":
        return 0.1 * 0.5 ** (step // 3)
    if schedule == "piecewise_constant":
        return 0.1 if step <= 3 else 0.05 if step <= 6 else 0.01
    if schedule in ("cosine_decay", "keras_cosine_decay"):
        return 0.1 * 0.5 * (1 + math.cos(math.pi * min(step, SCHEDULE_STEPS) / SCHEDULE_STEPS))
    if schedule == "polynomial_decay":
        return (0.1 - 0.01) * (1 - min(step, 8) / 8) ** 2 + 0.01
    raise KeyError(schedule)


def schedule_model_fn(api: Any, schedule: str, step_update: str):
    """loss = w (features are ones), GradientDescent at SCHEDULES[schedule](global step).

    Each train step records the rate it used at index global_step of `probe/rates` and counts the
    global step it saw in `probe/seen`, before its update. step_update says how the train_op moves
    the global step: "minimize" (minimize(loss, global_step=gs)), "assign_add" (minimize(loss) and
    gs.assign_add(1)), "get_or_create" (as minimize, gs from get_or_create_global_step) or
    "untouched" (minimize(loss) alone: only this project's engine steps the global step then).
    """

    def model_fn(features, labels, mode, params):
        with v1.variable_scope("probe"):
            w = v1.get_variable("w", [], initializer=v1.constant_initializer(5.0))
            rates = v1.get_variable("rates", [SCHEDULE_STEPS], initializer=v1.zeros_initializer(), trainable=False)
            seen = v1.get_variable("seen", [SCHEDULE_STEPS], initializer=v1.zeros_initializer(), trainable=False)
        loss = w * tf.reduce_mean(features)
        if mode != api.ModeKeys.TRAIN:
            return api.TPUEstimatorSpec(mode, loss=loss)
        if step_update == "get_or_create":
            global_step = v1.train.get_or_create_global_step()
        else:
            global_step = v1.train.get_global_step()
        rate = SCHEDULES[schedule](global_step)
        record = [v1.scatter_update(rates, global_step, rate), v1.scatter_add(seen, global_step, 1.0)]
        with tf.control_dependencies(record):
            opt = v1.train.GradientDescentOptimizer(rate)
            if step_update in ("minimize", "get_or_create"):
                train_op = opt.minimize(loss, global_step=global_step)
            elif step_update == "assign_add":
                train_op = tf.group(opt.minimize(loss), v1.assign_add(global_step, 1))
            elif step_update == "untouched":
                train_op = opt.minimize(loss)
            else:
                raise ValueError(step_update)
        return api.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def run_schedule(api: Any, model_dir: str, schedule: str, step_update: str, iterations: int) -> dict:
    """Trains SCHEDULE_STEPS steps; returns the recorded rates, steps seen, w and the global step."""
    ones = np.ones([64, 1], np.float32)
    estimator = tpu_estimator(api, schedule_model_fn(api, schedule, step_update), model_dir, iterations,
                               batch=4)
    estimator.train(repeated_input_fn(ones, np.zeros([64], np.int32)), max_steps=SCHEDULE_STEPS)
    values = checkpoint_values(model_dir)
    return {"rates": values["probe/rates"], "seen": values["probe/seen"], "w": values["probe/w"],
            "global_step": values["global_step"]}


def global_step_probe_model_fn(api: Any):
    """Linear classifier whose predictions carry the global step; its train_op also increments the step."""

    def model_fn(features, labels, mode, params):
        logits = linear_logits(features)
        global_step = v1.train.get_global_step()
        if mode == api.ModeKeys.PREDICT:
            step = tf.fill(tf.shape(logits)[:1], global_step)
            return api.TPUEstimatorSpec(mode, predictions={"logits": logits, "global_step": step})
        loss = mean_cross_entropy(labels, logits)
        train_op = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
        return api.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def run_global_step_probe(api: Any, model_dir: str) -> dict:
    """3 steps, then predict 40 rows (3 batches) and evaluate: the global step model_fn saw in PREDICT."""
    x, y = classification_data(64)
    estimator = tpu_estimator(api, global_step_probe_model_fn(api), model_dir)
    estimator.train(repeated_input_fn(x, y), max_steps=3)
    steps = [int(p["global_step"]) for p in estimator.predict(one_pass_input_fn(x[:40]))]
    evaluation = estimator.evaluate(one_pass_input_fn(x[:40], y[:40]))
    return {"predicted_global_steps": steps, "evaluate_global_step": int(evaluation["global_step"]),
            "checkpoint_global_step": checkpoint_values(model_dir)["global_step"]}

# -- point 1: model_fns that build a train_op in every mode --------------------------------------------------
GUARD_TRAIN_ROWS = 16  # one batch: every step sees the same rows, however a train() call resumes the stream
GUARD_EVAL_ROWS = 48  # 3 full eval batches of 16 in one loop (2.15 averaged batch losses: no partial batch)


def every_mode_train_op_model_fn(api: Any, update: str):
    """A linear classifier that builds its train_op in TRAIN and EVAL (a common TF1 pattern).

    update: "gradient_descent" / "adam" (tf.compat.v1.train optimizers' minimize with global_step), or
    "handwritten" (w -= 0.5 * dloss/dw for each trainable variable, and global_step += 1).
    """

    def model_fn(features, labels, mode, params):
        logits = linear_logits(features)
        if mode == api.ModeKeys.PREDICT:
            return api.TPUEstimatorSpec(mode, predictions={"logits": logits})
        loss = mean_cross_entropy(labels, logits)
        global_step = v1.train.get_global_step()
        if update == "gradient_descent":
            train_op = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
        elif update == "adam":
            train_op = v1.train.AdamOptimizer(0.05).minimize(loss, global_step=global_step)
        elif update == "handwritten":
            variables = v1.trainable_variables()
            grads = tf.gradients(loss, variables)
            updates = [v1.assign_sub(v, 0.5 * g) for g, v in zip(grads, variables, strict=True)]
            train_op = tf.group(*updates, v1.assign_add(global_step, 1))
        else:
            raise ValueError(update)
        return api.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def run_every_mode_train_op(api: Any, model_dir: str, update: str, **config) -> dict:
    """train 3, evaluate, predict, evaluate, train to 6, evaluate; the numbers and the final checkpoint."""
    x, y = classification_data(GUARD_TRAIN_ROWS)
    ex, ey = classification_data(GUARD_EVAL_ROWS, seed=1)
    estimator = tpu_estimator(api, every_mode_train_op_model_fn(api, update), model_dir, **config)
    estimator.train(repeated_input_fn(x, y), max_steps=3)
    first = estimator.evaluate(one_pass_input_fn(ex, ey))
    logits = [p["logits"].tolist() for p in estimator.predict(one_pass_input_fn(ex))]
    again = estimator.evaluate(one_pass_input_fn(ex, ey))
    at_3 = checkpoint_values(model_dir)
    estimator.train(repeated_input_fn(x, y), max_steps=6)
    last = estimator.evaluate(one_pass_input_fn(ex, ey))
    return {
        "evaluations": [{"loss": float(r["loss"]), "global_step": int(r["global_step"])} for r in (first, again, last)],
        "logits_at_3": logits, "checkpoint_at_3": at_3, "checkpoint_at_6": checkpoint_values(model_dir),
    }


# -- point 2: the training input stream across train() calls ------------------------------------------------
STREAM_BATCHES = 6  # one pass over the data: E = 6 steps
STREAM_BATCH = 4


def stream_data() -> tuple[np.ndarray, np.ndarray]:
    """Rows of batch k (in order) are one-hot(k), so the gradient of `visits` says which batch a step saw."""
    x = np.repeat(np.eye(STREAM_BATCHES, dtype=np.float32), STREAM_BATCH, axis=0)
    return x, np.zeros([len(x)], np.int32)


def stream_model_fn(api: Any, spec: str = "tpu"):
    """`visits` (zeros) trained by GradientDescent(1) on visits . mean(features): visits[k] = -(steps on batch k)."""

    def model_fn(features, labels, mode, params):
        with v1.variable_scope("stream"):
            visits = v1.get_variable("visits", [STREAM_BATCHES], initializer=v1.zeros_initializer())
        loss = tf.reduce_sum(visits * tf.reduce_mean(features, 0))
        train_op = None
        if mode == api.ModeKeys.TRAIN:
            train_op = v1.train.GradientDescentOptimizer(1.0).minimize(loss, global_step=v1.train.get_global_step())
        spec_class = api.TPUEstimatorSpec if spec == "tpu" else api.EstimatorSpec
        return spec_class(mode, loss=loss, train_op=train_op)

    return model_fn


def run_epochs(api: Any, model_dir: str, rounds: int = 3) -> list[dict]:
    """train() (a one-pass input_fn) then evaluate(), `rounds` times (TPUEstimator)."""
    x, y = stream_data()
    estimator = tpu_estimator(api, stream_model_fn(api), model_dir, batch=STREAM_BATCH)
    results = []
    for _ in range(rounds):
        estimator.train(one_pass_input_fn(x, y, drop_remainder=True))
        evaluation = estimator.evaluate(one_pass_input_fn(x, y))
        results.append({"global_step": int(evaluation["global_step"]), "loss": float(evaluation["loss"]),
                        "visits": checkpoint_values(model_dir)["stream/visits"]})
    return results


def run_train_and_evaluate(api: Any, model_dir: str, max_steps: int | None) -> dict:
    """train_and_evaluate (Estimator) with a one-pass train input_fn."""
    x, y = stream_data()
    estimator = _estimator(api, stream_model_fn(api, spec="estimator"), model_dir, batch=STREAM_BATCH)
    metrics, _ = api.train_and_evaluate(
        estimator,
        api.TrainSpec(one_pass_input_fn(x, y, drop_remainder=True), max_steps=max_steps),
        api.EvalSpec(one_pass_input_fn(x, y), steps=None, throttle_secs=0),
    )
    return {"global_step": int(metrics["global_step"]), "loss": float(metrics["loss"]),
            "visits": checkpoint_values(model_dir)["stream/visits"]}


# -- point 10: features-only training input, loss of shape [1] --------------------------------------------
TARGET_W0 = np.array([[0.1], [-0.2], [0.3]], np.float32)


def features_only_model_fn(api: Any, spec: str = "tpu"):
    """Regression of x . w towards 1, from features alone (labels must be None)."""

    def model_fn(features, labels, mode, params):
        if labels is not None:
            raise ValueError(f"expected no labels, got {labels}")
        x = features["x"] if isinstance(features, dict) else features
        with v1.variable_scope("regression"):
            w = v1.get_variable("w", [FEATURES, 1], initializer=v1.constant_initializer(TARGET_W0))
        prediction = tf.matmul(x, w)
        spec_class = api.TPUEstimatorSpec if spec == "tpu" else api.EstimatorSpec
        if mode == api.ModeKeys.PREDICT:
            return spec_class(mode, predictions={"prediction": prediction})
        loss = tf.reduce_mean(tf.square(prediction - 1.0))
        train_op = None
        if mode == api.ModeKeys.TRAIN:
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())
        return spec_class(mode, loss=loss, train_op=train_op)

    return model_fn


def run_features_only(api: Any, model_dir: str, estimator: str, as_dict: bool) -> dict:
    """5 steps on features-only input (a tensor, or a dict with 'x'), then evaluate on features only."""
    x, _ = classification_data(48)
    data = {"x": x} if as_dict else x
    if estimator == "tpu":
        est = tpu_estimator(api, features_only_model_fn(api), model_dir)
    else:
        est = _estimator(api, features_only_model_fn(api, spec="estimator"), model_dir)
    est.train(repeated_input_fn(data), max_steps=5)
    evaluation = est.evaluate(one_pass_input_fn(data))
    return {"w": checkpoint_values(model_dir)["regression/w"], "loss": float(evaluation["loss"]),
            "global_step": int(evaluation["global_step"])}


def loss_shape_model_fn(api: Any, shape: list[int]):
    """The linear classifier with GradientDescent, its mean loss returned with shape `shape` ([], [1], [1, 1])."""

    def model_fn(features, labels, mode, params):
        logits = linear_logits(features)
        loss = tf.reshape(mean_cross_entropy(labels, logits), shape)
        train_op = None
        if mode == api.ModeKeys.TRAIN:
            train_op = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=v1.train.get_global_step())
        return api.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def run_loss_shape(api: Any, model_dir: str, shape: list[int]) -> dict:
    x, y = classification_data(64)
    estimator = tpu_estimator(api, loss_shape_model_fn(api, shape), model_dir)
    estimator.train(repeated_input_fn(x, y), max_steps=4)
    evaluation = estimator.evaluate(one_pass_input_fn(x, y))
    return {"loss": float(evaluation["loss"]), "checkpoint": checkpoint_values(model_dir)}


# -- point 5: graph collections inside model_fn ------------------------------------------------------------
def _l2(weight: tf.Tensor) -> tf.Tensor:
    return 0.01 * tf.reduce_sum(tf.square(weight))


def collections_model_fn(api: Any, seen: list | None = None):
    """TF1 code that relies on the graph's collections (regularization, update ops, trainable variables).

    `net/w` has a get_variable regularizer (REGULARIZATION_LOSSES); `net/moving_mean` of the features is
    updated through UPDATE_OPS in TRAIN and centres them in EVAL; minimize's var_list is
    tf.compat.v1.trainable_variables(scope="net"). Each call appends what it saw to `seen`.
    """

    def model_fn(features, labels, mode, params):
        with v1.variable_scope("net"):
            w = v1.get_variable("w", [FEATURES, CLASSES], initializer=v1.constant_initializer(W0), regularizer=_l2)
            b = v1.get_variable("b", [CLASSES], initializer=v1.constant_initializer(B0))
            moving_mean = v1.get_variable("moving_mean", [FEATURES], initializer=v1.zeros_initializer(),
                                          trainable=False)
        if mode == api.ModeKeys.TRAIN:
            # The batch's own statistics would make training depend on the per-replica batch; only the
            # moving mean (the same however the global batch is split) is trained and used in EVAL.
            mean = tf.reduce_mean(features, 0)
            v1.add_to_collection(v1.GraphKeys.UPDATE_OPS, v1.assign(moving_mean, 0.5 * moving_mean + 0.5 * mean))
            centred = features
        else:
            centred = features - moving_mean
        logits = tf.matmul(centred, w) + b
        if seen is not None:
            seen.append({
                "mode": mode,
                "trainable_variables": [v.name for v in v1.trainable_variables()],
                "global_variables_in_net": sorted(v.name for v in v1.global_variables(scope="net")),
                "update_ops": len(v1.get_collection(v1.GraphKeys.UPDATE_OPS)),
                "regularization_losses": len(v1.get_collection(v1.GraphKeys.REGULARIZATION_LOSSES)),
                "global_step_collection": [v.name for v in v1.get_collection(v1.GraphKeys.GLOBAL_STEP)],
            })
        if mode == api.ModeKeys.PREDICT:
            return api.TPUEstimatorSpec(mode, predictions={"logits": logits})
        loss = mean_cross_entropy(labels, logits) + v1.losses.get_regularization_loss()
        train_op = None
        if mode == api.ModeKeys.TRAIN:
            opt = v1.train.GradientDescentOptimizer(0.5)
            with tf.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
                train_op = opt.minimize(loss, global_step=v1.train.get_global_step(),
                                        var_list=v1.trainable_variables(scope="net"))
        return api.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def run_collections(api: Any, model_dir: str, **config) -> dict:
    """5 steps of global batch 16, then evaluate; what model_fn saw, the checkpoint and the eval loss."""
    x, y = classification_data(80)
    seen: list = []
    estimator = tpu_estimator(api, collections_model_fn(api, seen), model_dir, **config)
    estimator.train(repeated_input_fn(x, y), max_steps=5)
    evaluation = estimator.evaluate(one_pass_input_fn(x, y))
    distinct = []
    for entry in seen:
        if entry not in distinct:
            distinct.append(entry)
    return {"seen": distinct, "checkpoint": checkpoint_values(model_dir), "loss": float(evaluation["loss"])}


# -- point 3: input_fn's arguments by name -----------------------------------------------------------------
INPUT_FN_VARIANTS = ("mode_params", "params_mode", "params_mode_config", "params_default_mode", "partial",
                     "callable_object", "no_args", "kwargs_only")
NEEDS_NO_PARAMS = ("no_args", "kwargs_only")  # TPUEstimator refuses these: it passes the batch size in params


def _describe(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return type(value).__name__


def _received(kwargs: dict, model_dir: str) -> dict:
    """What an input_fn received, comparably: mode's value, params' keys and plain values, config's model_dir."""
    out = {}
    for name, value in kwargs.items():
        if name == "mode":
            out["mode"] = str(value)
        elif name == "params":
            out["params"] = {key: _describe(value[key]) for key in sorted(value)}
        elif name == "config":
            out["config_model_dir"] = value.model_dir == model_dir
        else:
            out[name] = _describe(value)
    return out


def input_fn_variant(variant: str, stage: list, record: list, model_dir: str):
    """An input_fn declaring `variant`'s arguments; it records them and returns the data of stage[0]."""
    x, y = classification_data(32)

    def dataset(params: dict | None) -> tf.data.Dataset:
        batch = params["batch_size"] if params else BATCH
        if stage[0] == "predict":
            return tf.data.Dataset.from_tensor_slices(x).batch(batch)
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(batch, drop_remainder=True)

    def note(**kwargs):
        record.append({"variant": variant, "stage": stage[0], **_received(kwargs, model_dir)})

    if variant == "mode_params":
        def input_fn(mode, params):
            note(mode=mode, params=params)
            return dataset(params)
    elif variant == "params_mode":
        def input_fn(params, mode):
            note(params=params, mode=mode)
            return dataset(params)
    elif variant == "params_mode_config":
        def input_fn(params, mode, config):
            note(params=params, mode=mode, config=config)
            return dataset(params)
    elif variant == "params_default_mode":
        def input_fn(params, mode=None):
            note(params=params, mode=mode)
            return dataset(params)
    elif variant == "partial":
        import functools

        def full(bound, mode, params):
            note(bound=bound, mode=mode, params=params)
            return dataset(params)

        input_fn = functools.partial(full, "bound")
    elif variant == "callable_object":
        class InputFn:
            def __call__(self, mode, params):
                note(mode=mode, params=params)
                return dataset(params)

        input_fn = InputFn()
    elif variant == "no_args":
        def input_fn():
            note()
            return dataset(None)
    elif variant == "kwargs_only":
        def input_fn(**kwargs):
            note(**kwargs)
            return dataset(kwargs.get("params"))
    else:
        raise ValueError(variant)
    return input_fn


def input_fn_args_model_fn(api: Any, spec: str = "tpu", record: list | None = None):
    """The linear classifier with a v1 GradientDescent train_op; with `record`, each call appends its mode
    and what its params held (_received's form)."""
    spec_class = api.TPUEstimatorSpec if spec == "tpu" else api.EstimatorSpec

    def model_fn(features, labels, mode, params):
        if record is not None:
            record.append({"mode": str(mode), **_received({"params": params}, "")})
        logits = linear_logits(features)
        if mode == api.ModeKeys.PREDICT:
            return spec_class(mode, predictions={"logits": logits})
        loss = mean_cross_entropy(labels, logits)
        train_op = None
        if mode == api.ModeKeys.TRAIN:
            train_op = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=v1.train.get_global_step())
        return spec_class(mode, loss=loss, train_op=train_op)

    return model_fn


def run_input_fn_args(api: Any, model_dir: str, estimator: str) -> list[dict]:
    """Every variant's input_fn through train (1 step), evaluate (1 step) and predict (1 row): what each got."""
    record: list = []
    stage = [""]
    if estimator == "tpu":
        est = tpu_estimator(api, input_fn_args_model_fn(api), model_dir, params={"user": "kept"})
        variants = [v for v in INPUT_FN_VARIANTS if v not in NEEDS_NO_PARAMS]
    else:
        run_config = api.RunConfig(model_dir=model_dir, save_checkpoints_steps=1000)
        est = api.Estimator(input_fn_args_model_fn(api, spec="estimator"), config=run_config,
                            params={"batch_size": 8, "user": "kept"})
        variants = INPUT_FN_VARIANTS
    for steps, variant in enumerate(variants, start=1):
        input_fn = input_fn_variant(variant, stage, record, model_dir)
        stage[0] = "train"
        est.train(input_fn, max_steps=steps)
        stage[0] = "evaluate"
        est.evaluate(input_fn, steps=1)
        stage[0] = "predict"
        next(iter(est.predict(input_fn)))
    return record


def mode_selected_input_fn(x, y, test_x, test_y):
    """The tutorial pattern: input_fn(mode, params) picks the training or the test set by `mode`."""

    def input_fn(mode, params):
        if mode == "train":
            return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params["batch_size"], drop_remainder=True)
        return tf.data.Dataset.from_tensor_slices((test_x, test_y)).batch(params["batch_size"])

    return input_fn


def run_mode_selected_input(api: Any, model_dir: str, estimator: str) -> dict:
    """4 steps on the training set (chosen by mode), evaluated on the test set."""
    x, y = classification_data(64)
    test_x, test_y = classification_data(32, seed=5)
    model_fn = input_fn_args_model_fn(api, spec=estimator)
    est = tpu_estimator(api, model_fn, model_dir) if estimator == "tpu" else _estimator(api, model_fn, model_dir)
    input_fn = mode_selected_input_fn(x, y, test_x, test_y)
    est.train(input_fn, max_steps=4)
    evaluation = est.evaluate(input_fn)
    return {"loss": float(evaluation["loss"]), "checkpoint": checkpoint_values(model_dir)}


# -- point 8: params as TPUEstimator / Estimator set them -----------------------------------------------------
def params_probe_model_fn(api: Any, record: list, spec: str = "tpu"):
    """The linear classifier; every call records its mode and what its params held (_received's form)."""
    return input_fn_args_model_fn(api, spec, record)


def run_model_fn_params(api: Any, model_dir: str, estimator: str) -> dict:
    """train 1 step, evaluate 1 step, predict 1 row: the params each model_fn call saw, and the caller's dict after."""
    x, y = classification_data(32)
    record: list = []
    user_params = {"user": "kept", "learning_rate": 0.5}
    if estimator == "tpu":
        est = tpu_estimator(api, params_probe_model_fn(api, record), model_dir, params=user_params)
    else:
        user_params["batch_size"] = 8
        run_config = api.RunConfig(model_dir=model_dir, save_checkpoints_steps=1000)
        est = api.Estimator(params_probe_model_fn(api, record, spec="estimator"), config=run_config,
                            params=user_params)
    est.train(repeated_input_fn(x, y), max_steps=1)
    est.evaluate(repeated_input_fn(x, y), steps=1)
    next(iter(est.predict(one_pass_input_fn(x))))
    distinct = []
    for entry in record:
        if entry not in distinct:
            distinct.append(entry)
    return {"model_fn_params": distinct, "params_after": _received({"params": user_params}, "")["params"],
            "estimator_params": _received({"params": est.params}, "")["params"]}
