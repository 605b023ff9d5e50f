"""Small TF1-style Estimator programs whose results our engine has given silently differently from tf.estimator 2.15.

Each case is written once, as a tf.estimator 2.15 user writes it, with the estimator names taken from a
namespace: under the real 2.15 (tests/reference/make_silent_cases_215.py, /work/venv215) `est` is
`tf.compat.v1.estimator` and `tpu` is `tf.compat.v1.estimator.tpu`; under this project
(tests/test_silent_cases_215.py) both are the `estimators` package (the port: imports changed, nothing else).
Every other name (tf.compat.v1.train.init_from_checkpoint, LoggingTensorHook, ExponentialMovingAverage,
tf.compat.v2.summary, ...) is TensorFlow's own and is written the same in both.

Run one case in a fresh process (some change process-wide state: disable_eager_execution, logical CPUs):

    python tests/silent_cases.py {tf215|ours} CASE

It prints one line `SILENT_RESULT <json>` on stdout. Models are tiny linear regressions with constant
initial values, fixed numpy data in a fixed order and plain SGD, so 2.15's numbers are exact.
Where 2.15 raised, the case records {"error": <exception class>} instead of a value.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import tempfile
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

RESULT_PREFIX = "SILENT_RESULT "
CASES: dict = {}

# -- data: y = 2 x0 - x1 + 0.5 + fixed noise; 16 rows = 4 batches of 4 ----------------------------------------
ROWS = 16
BATCH = 4
X = (np.arange(ROWS * 2, dtype=np.float32).reshape(ROWS, 2) % 7 - 3.0) / 3.0
NOISE = (np.arange(ROWS, dtype=np.float32) % 5 - 2.0).reshape(ROWS, 1) * 0.05
Y = (X @ np.array([[2.0], [-1.0]], np.float32) + 0.5 + NOISE).astype(np.float32)
W0 = np.array([[0.1], [0.2]], np.float32)
B0 = np.array([0.0], np.float32)
W_CKPT = np.array([[1.0], [-0.5]], np.float32)  # what init_from_checkpoint loads (cases 1 and 2)
B_CKPT = np.array([0.3], np.float32)
LEARNING_RATE = 0.1


def case(*, prelude=None, ours_only=False):
    """Registers a case. prelude(tf) runs right after `import tensorflow`, before the estimator package.
    ours_only: a variant only this project can run (its 2.15 reference is another case's)."""

    def register(fn):
        fn.prelude = prelude
        fn.ours_only = ours_only
        CASES[fn.__name__] = fn
        return fn

    return register


def to_json(value):
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return to_json(value.tolist())
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def builtin_exception_name(error: BaseException) -> str:
    """The nearest builtin exception class (tf.errors.* keep their own names): what a caller can catch."""
    for klass in type(error).__mro__:
        if klass.__module__ == "builtins" or klass.__module__.startswith("tensorflow.python.framework.errors"):
            return klass.__name__
    return type(error).__name__


def attempt(fn):
    """fn()'s value, or {"error": class, "message": first line} when it raises."""
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - the error is the result
        traceback.print_exc()
        message = str(error).strip().splitlines()[0][:300] if str(error).strip() else ""
        return {"error": builtin_exception_name(error),
                "message": re.sub(re.escape(tempfile.gettempdir()) + r"/[^/\s]+", "<scratch>", message)}


# -- shared model pieces ------------------------------------------------------------------------------------------
def linear_variables(tf, w0=W0, b0=B0):
    v1 = tf.compat.v1
    w = v1.get_variable("w", [2, 1], initializer=v1.constant_initializer(w0))
    b = v1.get_variable("b", [1], initializer=v1.constant_initializer(b0))
    return w, b


def mse(tf, labels, predictions):
    return tf.reduce_mean(tf.square(predictions - labels))


def sgd_train_op(tf, loss):
    v1 = tf.compat.v1
    return v1.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss, global_step=v1.train.get_global_step())


def train_input_fn(tf, batch=BATCH):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(batch)

    return input_fn


def eval_input_fn(tf, batch=BATCH):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch)

    return input_fn


def predict_input_fn(tf, rows=6, batch=BATCH):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X[:rows]}).batch(batch)

    return input_fn


def tpu_input_fn(tf, kind: str, rows: int = 8):
    """TPUEstimator input_fns take params and batch by params['batch_size'], with drop_remainder as TPU programs do
    (every batch here is full either way)."""

    def input_fn(params):
        batch = params["batch_size"]
        if kind == "train":
            return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(batch, drop_remainder=True)
        if kind == "eval":
            return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch, drop_remainder=True)
        return tf.data.Dataset.from_tensor_slices({"x": X[:rows]}).batch(batch, drop_remainder=True)

    return input_fn


def values(estimator, names=("w", "b")):
    return {name: estimator.get_variable_value(name) for name in names}


def eval_numbers(result: dict) -> dict:
    return {k: np.asarray(v).tolist() for k, v in result.items()}


def write_checkpoint(tf, directory: str) -> str:
    """A TF1 checkpoint holding w = W_CKPT, b = B_CKPT (and nothing else), written with a Saver."""
    v1 = tf.compat.v1
    path = os.path.join(directory, "init", "model.ckpt")
    os.makedirs(os.path.dirname(path))
    with tf.Graph().as_default():
        linear_variables(tf, W_CKPT, B_CKPT)
        saver = v1.train.Saver()
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            return saver.save(session, path)


# -- 1. init_from_checkpoint in a plain Estimator's model_fn -----------------------------------------------------
@case()
def init_from_checkpoint_estimator(tf, est, tpu, scratch):
    init = write_checkpoint(tf, scratch)

    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        tf.compat.v1.train.init_from_checkpoint(init, {"w": "w", "b": "b"})
        predictions = tf.matmul(features["x"], w) + b
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(mode, predictions={"y": predictions})
        loss = mse(tf, labels, predictions)
        return est.EstimatorSpec(mode, loss=loss, train_op=sgd_train_op(tf, loss))

    estimator = est.Estimator(model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, "model")))
    out = {}
    estimator.train(train_input_fn(tf), steps=3)
    out["after_first_train"] = values(estimator)
    out["evaluate"] = eval_numbers(estimator.evaluate(eval_input_fn(tf)))
    estimator.train(train_input_fn(tf), steps=3)
    out["after_second_train"] = values(estimator)
    out["predict"] = [p["y"] for p in estimator.predict(predict_input_fn(tf))]

    def root_model_fn(features, labels, mode):  # {"/": "/"} maps every variable, the global_step too
        w, b = linear_variables(tf)
        tf.compat.v1.train.init_from_checkpoint(init, {"/": "/"})
        loss = mse(tf, labels, tf.matmul(features["x"], w) + b)
        return est.EstimatorSpec(mode, loss=loss, train_op=sgd_train_op(tf, loss))

    root = est.Estimator(root_model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, "root")))
    out["root_map_train"] = attempt(lambda: root.train(train_input_fn(tf), steps=1) and None)
    return out


# -- 2. init_from_checkpoint in TPUEstimatorSpec(scaffold_fn=...) (the BERT pattern) --------------------------------
@case()
def init_from_checkpoint_scaffold_fn(tf, est, tpu, scratch):
    init = write_checkpoint(tf, scratch)

    def model_fn(features, labels, mode, params):
        w, b = linear_variables(tf)

        def scaffold_fn():
            # ({"/": "/"} fails on 2.15 too: it also maps the estimator's global_step, absent from the file.)
            tf.compat.v1.train.init_from_checkpoint(init, {"w": "w", "b": "b"})
            return tf.compat.v1.train.Scaffold()

        predictions = tf.matmul(features["x"], w) + b
        if mode == est.ModeKeys.PREDICT:
            return tpu.TPUEstimatorSpec(mode, predictions={"y": predictions}, scaffold_fn=scaffold_fn)
        loss = mse(tf, labels, predictions)
        train_op = sgd_train_op(tf, loss) if mode == est.ModeKeys.TRAIN else None
        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn)

    config = tpu.RunConfig(model_dir=os.path.join(scratch, "model"),
                           tpu_config=tpu.TPUConfig(iterations_per_loop=1))
    estimator = tpu.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=BATCH,
                                 eval_batch_size=BATCH, predict_batch_size=BATCH)
    out = {}
    estimator.train(tpu_input_fn(tf, "train"), steps=3)
    out["after_first_train"] = values(estimator)
    out["evaluate"] = eval_numbers(estimator.evaluate(tpu_input_fn(tf, "eval"), steps=ROWS // BATCH))
    estimator.train(tpu_input_fn(tf, "train"), steps=3)
    out["after_second_train"] = values(estimator)
    out["predict"] = [p["y"] for p in estimator.predict(tpu_input_fn(tf, "predict"))]
    return out


# -- 3. a LOCAL_VARIABLES counter made in model_fn, incremented once per session.run -----------------------------------
@case()
def local_variable_counter(tf, est, tpu, scratch):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        counter = v1.get_variable("counter", initializer=0.0, collections=[v1.GraphKeys.LOCAL_VARIABLES],
                                  trainable=False)
        # +1 that needs this run's batch: a data-independent assign_add also ran (racily) in 2.15's last
        # evaluation run, the one whose get_next raised OutOfRangeError (2.15 then counted 5 for 4 batches).
        one = tf.cast(tf.size(features["x"]) >= 0, tf.float32)
        increment = v1.assign_add(counter, one)
        predictions = tf.matmul(features["x"], w) + b
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(mode, predictions={
                "y": predictions, "counter": tf.zeros_like(predictions[:, 0]) + increment})
        loss = mse(tf, labels, predictions)
        if mode == est.ModeKeys.TRAIN:
            return est.EstimatorSpec(mode, loss=loss, train_op=tf.group(sgd_train_op(tf, loss), increment))
        return est.EstimatorSpec(mode, loss=loss, eval_metric_ops={"counter": (tf.identity(counter), increment)})

    estimator = est.Estimator(model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, "model")))
    estimator.train(train_input_fn(tf), steps=5)
    return {
        "first_evaluate": eval_numbers(estimator.evaluate(eval_input_fn(tf))),  # 4 batches
        "second_evaluate": eval_numbers(estimator.evaluate(eval_input_fn(tf))),
        "evaluate_steps_2": eval_numbers(estimator.evaluate(eval_input_fn(tf), steps=2)),
        "predict_counter": [p["counter"] for p in estimator.predict(predict_input_fn(tf, rows=10))],  # 3 batches
    }


# -- 4. an ExponentialMovingAverage written in a cross-replica merge_call under MirroredStrategy ---------------------
def two_logical_cpus(tf):
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)


def ema_mirrored(tf, est, replicas: int, scratch: str, **config_args):
    v1 = tf.compat.v1
    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])

    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        predictions = tf.matmul(features["x"], w) + b
        loss = mse(tf, labels, predictions)
        ema = v1.train.ExponentialMovingAverage(decay=0.5)
        if mode == est.ModeKeys.TRAIN:
            with tf.control_dependencies([sgd_train_op(tf, loss)]):
                train_op = ema.apply([w, b])
            return est.EstimatorSpec(mode, loss=loss, train_op=train_op)
        # After this run's loss: an update that does not need the batch also ran (racily) in the evaluation's
        # last session.run, the one whose get_next raised OutOfRangeError (2.15 then averaged 5 values for 4).
        with tf.control_dependencies([loss]):
            ema_op = ema.apply([w, b])
        with tf.control_dependencies([ema_op]):
            average_w = tf.identity(ema.average(w))
            average_b = tf.identity(ema.average(b))
        return est.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "mean_ema_w0": v1.metrics.mean(average_w[0, 0]),
            "mean_ema_b": v1.metrics.mean(average_b[0]),
        })

    # device_count: 2.15's sessions do not see tf.config's logical CPUs; without it 2.15 hangs in the first
    # 2-replica training step (both replicas placed on the one CPU the session has).
    config = est.RunConfig(model_dir=os.path.join(scratch, "model"), train_distribute=strategy,
                           eval_distribute=strategy,
                           session_config=v1.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True),
                           **config_args)
    estimator = est.Estimator(model_fn, config=config)
    out = {"train": attempt(lambda: estimator.train(train_input_fn(tf), steps=4) and None)}
    if out["train"] is None:
        names = estimator.get_variable_names()
        out["variables"] = {name: estimator.get_variable_value(name) for name in names
                            if name in ("w", "b", "w/ExponentialMovingAverage", "b/ExponentialMovingAverage",
                                        "global_step")}
        out["evaluate"] = attempt(lambda: eval_numbers(estimator.evaluate(eval_input_fn(tf))))
    return out


@case(prelude=two_logical_cpus)
def ema_mirrored_1_replica(tf, est, tpu, scratch):
    return ema_mirrored(tf, est, 1, scratch)


@case(prelude=two_logical_cpus)
def ema_mirrored_2_replicas(tf, est, tpu, scratch):
    return ema_mirrored(tf, est, 2, scratch)


@case(prelude=two_logical_cpus, ours_only=True)
def ema_mirrored_2_replicas_graph_path(tf, est, tpu, scratch):
    """Ours only: the same program with training on the graph path too (2.15's reference is the case above)."""
    return ema_mirrored(tf, est, 2, scratch, execution="graph")


# -- 5. a host_call writing tf2 summaries, one named learning_rate (the resnet_main.py pattern) ----------------------
def scalar_events(directory: str) -> dict:
    """{tag: [[step, value], ...]} of the scalars in directory's event files (not its subfolders), in write order."""
    import tensorflow as tf

    found: dict = {}
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    number = float(value.simple_value)
                elif value.HasField("tensor") and value.metadata.plugin_data.plugin_name == "scalars":
                    number = float(tf.make_ndarray(value.tensor))
                else:
                    continue
                found.setdefault(value.tag, []).append([int(event.step), number])
    return found


THROUGHPUT_TAGS = ("global_step/sec", "examples/sec")


@case()
def host_call_learning_rate(tf, est, tpu, scratch):
    v1 = tf.compat.v1
    tf2 = tf.compat.v2
    model_dir = os.path.join(scratch, "model")

    def model_fn(features, labels, mode, params):
        w, b = linear_variables(tf)
        loss = mse(tf, labels, tf.matmul(features["x"], w) + b)
        global_step = v1.train.get_global_step()
        step_before = tf.identity(global_step)  # read before this step's increment
        with tf.control_dependencies([step_before]):
            learning_rate = v1.train.exponential_decay(0.2, step_before, 2, 0.5, staircase=True)
            train_op = v1.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step)

        def host_call_fn(gs, loss, lr):
            gs = gs[0]
            with tf2.summary.create_file_writer(model_dir, max_queue=1).as_default():
                with tf2.summary.record_if(True):
                    tf2.summary.scalar("loss", loss[0], step=gs)
                    tf2.summary.scalar("learning_rate", lr[0], step=gs)
                return v1.summary.all_v2_summary_ops()

        host_call = (host_call_fn, [tf.reshape(step_before, [1]), tf.reshape(loss, [1]),
                                    tf.reshape(learning_rate, [1])])
        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)

    config = tpu.RunConfig(model_dir=model_dir, tpu_config=tpu.TPUConfig(iterations_per_loop=1))
    estimator = tpu.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=BATCH)
    estimator.train(tpu_input_fn(tf, "train"), steps=6)
    events = scalar_events(model_dir)
    return {"scalars": {tag: ([[step, None] for step, _ in points] if tag in THROUGHPUT_TAGS else points)
                        for tag, points in events.items()},
            "w": estimator.get_variable_value("w")}


# -- 6. tf.compat.v1.train.LoggingTensorHook as a training hook, read from stderr ------------------------------------
def capture_stderr(fn):
    """(fn(), what the process wrote to file descriptor 2 meanwhile); the text is also passed on to stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            result = fn()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
    sys.stderr.write(text)
    sys.stderr.flush()
    return result, text


NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"


def logging_hook_lines(text: str) -> dict:
    """The user hook's lines (`loss = V` / `loss = V (T sec)`) and the estimator's own (`loss = V, step = N`)."""
    hook, own = [], []
    for line in text.splitlines():
        found = re.search(rf"loss = ({NUMBER}), step = (\d+)", line)
        if found:
            own.append([int(found.group(2)), float(found.group(1))])
            continue
        found = re.search(rf"\bloss = ({NUMBER})((?: \({NUMBER} sec\))?)$", line)
        if found:
            template = line[:found.start(1)] + "V" + re.sub(NUMBER, "T", found.group(2))
            hook.append({"value": float(found.group(1)), "template": template})
    return {"hook_lines": hook, "estimator_loss_lines": own}


@case()
def logging_tensor_hook(tf, est, tpu, scratch):
    v1 = tf.compat.v1
    v1.logging.set_verbosity(v1.logging.INFO)

    def model_fn_with_hook(features, labels, mode):
        w, b = linear_variables(tf)
        loss = mse(tf, labels, tf.matmul(features["x"], w) + b)
        hook = v1.train.LoggingTensorHook({"loss": loss}, every_n_iter=3)
        return est.EstimatorSpec(mode, loss=loss, train_op=sgd_train_op(tf, loss), training_hooks=[hook])

    out = {}
    estimator = est.Estimator(model_fn_with_hook, config=est.RunConfig(model_dir=os.path.join(scratch, "spec")))
    _, text = capture_stderr(lambda: estimator.train(train_input_fn(tf), steps=10))
    out["in_spec"] = logging_hook_lines(text)
    out["in_spec"]["w"] = estimator.get_variable_value("w")

    def model_fn_named_loss(features, labels, mode):  # the official mnist pattern: a named tensor, hooks=
        w, b = linear_variables(tf)
        loss = tf.identity(mse(tf, labels, tf.matmul(features["x"], w) + b), name="named_loss")
        return est.EstimatorSpec(mode, loss=loss, train_op=sgd_train_op(tf, loss))

    estimator = est.Estimator(model_fn_named_loss, config=est.RunConfig(model_dir=os.path.join(scratch, "named")))
    hook = v1.train.LoggingTensorHook({"loss": "named_loss"}, every_n_iter=4)
    _, text = capture_stderr(lambda: estimator.train(train_input_fn(tf), steps=10, hooks=[hook]))
    out["train_hooks"] = logging_hook_lines(text)
    return out


# -- 7. how often input_fn is called; input_fns returning tensors, Datasets, numpy arrays, lists ---------------------
@case()
def input_fn_calls(tf, est, tpu, scratch):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        predictions = tf.matmul(features["x"], w) + b
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(mode, predictions={"y": predictions})
        loss = mse(tf, labels, predictions)
        return est.EstimatorSpec(mode, loss=loss, train_op=sgd_train_op(tf, loss))

    def counted(kind: str, style: str, calls: list):
        def input_fn():
            calls.append(kind)
            if kind == "train":
                dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(BATCH)
            elif kind == "eval":
                dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(BATCH)
            else:
                dataset = tf.data.Dataset.from_tensor_slices({"x": X[:6]}).batch(BATCH)
            if style == "dataset":
                return dataset
            return v1.data.make_one_shot_iterator(dataset).get_next()

        return input_fn

    def run(style: str) -> dict:
        estimator = est.Estimator(model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, style)))
        calls: list = []
        out = {"train": attempt(lambda: estimator.train(counted("train", style, calls), steps=3) and None)}
        out["train_calls"] = calls.count("train")
        out["evaluate"] = attempt(lambda: eval_numbers(estimator.evaluate(counted("eval", style, calls))))
        out["evaluate_calls"] = calls.count("eval")
        out["predict"] = attempt(lambda: [p["y"] for p in estimator.predict(counted("predict", style, calls))])
        out["predict_calls"] = calls.count("predict")
        out["w"] = estimator.get_variable_value("w")
        return out

    return {style: run(style) for style in ("tensors", "dataset")}


@case()
def input_fn_numpy_and_lists(tf, est, tpu, scratch):
    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        predictions = tf.matmul(features["x"], w) + b
        loss = mse(tf, labels, predictions)
        return est.EstimatorSpec(mode, loss=loss, train_op=sgd_train_op(tf, loss))

    def run(style: str, make) -> dict:
        estimator = est.Estimator(model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, style)))
        calls = []

        def input_fn():
            calls.append(1)
            return make()

        out = {"train": attempt(lambda: estimator.train(input_fn, steps=3) and None)}
        out["train_calls"] = len(calls)
        if out["train"] is None:
            out["w"] = estimator.get_variable_value("w")
            out["b"] = estimator.get_variable_value("b")
            out["evaluate"] = attempt(lambda: eval_numbers(estimator.evaluate(input_fn, steps=2)))
            out["calls_after_evaluate"] = len(calls)
        return out

    return {"numpy": run("numpy", lambda: ({"x": X[:8]}, Y[:8])),
            "lists": run("lists", lambda: ({"x": X[:8].tolist()}, Y[:8].tolist()))}


# -- 8. predict(yield_single_examples=False) with a prediction that is one value per batch ---------------------------
@case()
def predict_batches(tf, est, tpu, scratch):
    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        predictions = tf.matmul(features["x"], w) + b
        return est.EstimatorSpec(mode, predictions={
            "y": predictions,                                           # [batch, 1]
            "batch_sum": tf.reshape(tf.reduce_sum(predictions), [1]),  # [1] whatever the batch
            "rows": tf.shape(predictions)[0:1],                         # [1]
        })

    estimator = est.Estimator(model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, "model")))
    input_fn = predict_input_fn(tf, rows=10)  # batches of 4, 4, 2

    def batches():
        return [{key: {"shape": list(np.shape(value)), "value": np.asarray(value).tolist()}
                 for key, value in sorted(batch.items())}
                for batch in estimator.predict(input_fn, yield_single_examples=False)]

    def singles():
        return [{key: np.asarray(value).tolist() for key, value in sorted(example.items())}
                for example in estimator.predict(input_fn, yield_single_examples=True)]

    return {"batches": attempt(batches), "single_examples": attempt(singles)}


# -- 9. EstimatorSpec validation when the spec is built (in model_fn, where programs build it) -----------------------
@case()
def estimator_spec_validation(tf, est, tpu, scratch):
    results: dict = {}

    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        predictions = tf.matmul(features["x"], w) + b
        loss = mse(tf, labels, predictions)
        train_op = sgd_train_op(tf, loss)
        spec = est.EstimatorSpec
        keys = est.ModeKeys
        invalid = {
            "loss_shape_2": lambda: spec(keys.TRAIN, loss=tf.stack([loss, loss]), train_op=train_op),
            "loss_shape_1_accepted": lambda: spec(keys.TRAIN, loss=tf.reshape(loss, [1]), train_op=train_op),
            "loss_python_float": lambda: spec(keys.TRAIN, loss=1.0, train_op=train_op),
            "loss_missing_in_train": lambda: spec(keys.TRAIN, train_op=train_op),
            "train_op_missing_in_train": lambda: spec(keys.TRAIN, loss=loss),
            "train_op_python_int": lambda: spec(keys.TRAIN, loss=loss, train_op=1),
            "loss_missing_in_eval": lambda: spec(keys.EVAL, predictions={"y": predictions}),
            "predictions_missing_in_predict": lambda: spec(keys.PREDICT, loss=loss),
            "predictions_list": lambda: spec(keys.PREDICT, predictions=[predictions]),
            "predictions_python_float": lambda: spec(keys.PREDICT, predictions=3.0),
            "predictions_dict_of_list": lambda: spec(keys.PREDICT, predictions={"y": [1.0, 2.0]}),
            "eval_metric_ops_value_not_pair": lambda: spec(keys.EVAL, loss=loss, eval_metric_ops={"m": loss}),
            "eval_metric_ops_triple": lambda: spec(keys.EVAL, loss=loss, eval_metric_ops={"m": (loss, loss, loss)}),
            "eval_metric_ops_not_dict": lambda: spec(keys.EVAL, loss=loss, eval_metric_ops=[(loss, loss)]),
            "eval_metric_ops_python_pair": lambda: spec(keys.EVAL, loss=loss, eval_metric_ops={"m": (1.0, 2.0)}),
            "mode_invalid": lambda: spec("bogus", loss=loss, train_op=train_op),
            "training_hooks_not_hooks": lambda: spec(keys.TRAIN, loss=loss, train_op=train_op,
                                                     training_hooks=[object()]),
            "export_outputs_tensor": lambda: spec(keys.PREDICT, predictions={"y": predictions},
                                                  export_outputs={"serving_default": predictions}),
            "scaffold_not_scaffold": lambda: spec(keys.TRAIN, loss=loss, train_op=train_op, scaffold=object()),
        }
        if not results:
            for name, build in invalid.items():
                try:
                    build()
                    results[name] = "accepted"
                except Exception as error:  # noqa: BLE001 - the exception class is the result
                    results[name] = builtin_exception_name(error)
        return spec(mode, loss=loss, train_op=train_op)

    estimator = est.Estimator(model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, "model")))
    estimator.train(train_input_fn(tf), steps=1)
    return results


# -- 10. tf.compat.v1.disable_eager_execution() at program start, then an ordinary Estimator run ---------------------
def disable_eager(tf):
    tf.compat.v1.disable_eager_execution()


@case(prelude=disable_eager)
def disable_eager_execution(tf, est, tpu, scratch):
    def model_fn(features, labels, mode):
        w, b = linear_variables(tf)
        predictions = tf.matmul(features["x"], w) + b
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(mode, predictions={"y": predictions})
        loss = mse(tf, labels, predictions)
        return est.EstimatorSpec(mode, loss=loss, train_op=sgd_train_op(tf, loss),
                                 eval_metric_ops={"mae": tf.compat.v1.metrics.mean_absolute_error(labels,
                                                                                                  predictions)})

    estimator = est.Estimator(model_fn, config=est.RunConfig(model_dir=os.path.join(scratch, "model")))
    out = {"train": attempt(lambda: estimator.train(train_input_fn(tf), steps=5) and None)}
    if out["train"] is None:
        out["w"] = estimator.get_variable_value("w")
        out["b"] = estimator.get_variable_value("b")
    out["evaluate"] = attempt(lambda: eval_numbers(estimator.evaluate(eval_input_fn(tf))))
    out["predict"] = attempt(lambda: [p["y"] for p in estimator.predict(predict_input_fn(tf))])
    return out


# -- the runner ----------------------------------------------------------------------------------------------------
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CaseFailed(AssertionError):
    """A case's process ended without a result line."""


def run_case(python: str, implementation: str, name: str, timeout_s: float = 300) -> dict:
    """Runs CASE in a fresh `python` process with the repository on PYTHONPATH; its result, "tensorflow" aside."""
    import subprocess

    from tests import launcher  # forks the child from a warm process that imported TensorFlow (tests/launcher.py)

    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    try:
        done = launcher.run([python, os.path.abspath(__file__), implementation, name], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as error:
        tail = (error.stderr or b"")[-3000:]
        raise CaseFailed(f"{name} ({implementation}) ran past {timeout_s:.0f} s; stderr tail:\n{tail!s}") from None
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
            result.pop("tensorflow", None)
            return result
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^\w[\w.]*(Error|Exception|Exit)\b", line)]
    last = errors[-1] if errors else (lines[-1] if lines else "")
    raise CaseFailed(f"{name} ({implementation}) exited {done.returncode} without a result: {last}\n"
                     f"stderr tail:\n" + "\n".join(lines[-40:]))


def main(argv) -> None:
    implementation, name = argv[1], argv[2]
    function = CASES[name]
    import tensorflow as tf

    if function.prelude is not None:
        function.prelude(tf)
    if implementation == "tf215":
        assert tf.__version__.startswith("2.15"), tf.__version__
        est = tf.compat.v1.estimator
        tpu = est.tpu
    elif implementation == "ours":
        import estimators as est

        tpu = est
    else:
        raise SystemExit(f"implementation must be tf215 or ours, not {implementation!r}")
    with tempfile.TemporaryDirectory() as scratch:
        result = function(tf, est, tpu, scratch)
    result = to_json(result)
    result["tensorflow"] = tf.__version__
    sys.stdout.write(RESULT_PREFIX + json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
