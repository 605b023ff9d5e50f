"""A running training accuracy (issue 18 item 4): the built-in classifiers report their batch accuracy through
train_metrics; the engine writes it to TensorBoard beside the loss and shows it on the progress line, outside
the step (so XLA-compiled steps work), and a model_fn that reports nothing gets nothing new."""

from __future__ import annotations

import glob
import io
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from estimators import RunConfig, TPUConfig, TPUEstimator
from estimators.training import progress_display, train_metrics
from estimators.training.hooks import Hook
from model_fns import common
from tests import engine_models as m

ROWS, BATCH = 48, 16  # three global batches of 16, repeated in order
KERNEL = np.random.RandomState(3).randn(m.FEATURES, m.CLASSES).astype("float32")  # fixed: accuracy varies by batch
ENGINE_TAGS = {"loss", "learning_rate", "global_step/sec", "examples/sec"}


def classifier_fn(features, labels, mode, params):
    """common.classifier_spec over fixed logits x @ KERNEL (SGD at rate 0: the weights never move)."""
    layer = keras.layers.Dense(m.CLASSES, use_bias=False, kernel_initializer=keras.initializers.Constant(KERNEL))
    logits = layer(features)
    return common.classifier_spec(mode, logits, labels, lambda: keras.optimizers.SGD(0.0), layer.trainable_variables)


def batch_accuracy(step: int) -> float:
    """The accuracy of global step `step`'s batch (1-based), from numpy."""
    x, y = m.dataset(ROWS)
    rows = slice((step - 1) % (ROWS // BATCH) * BATCH, ((step - 1) % (ROWS // BATCH) + 1) * BATCH)
    return float(np.mean(np.argmax(x[rows] @ KERNEL, axis=1) == y[rows]))


class LoopMetrics(Hook):
    def __init__(self):
        self.seen = []

    def after_loop(self, info):
        self.seen.append((info.step, dict(info.metrics)))


def train(model_dir, model_fn=classifier_fn, steps=6, iterations=3, strategy=None, summary_steps=1, **config):
    """Trains with a plain progress line after every loop; (progress text, hook)."""
    stream, hook = io.StringIO(), LoopMetrics()
    options = progress_display.DisplayOptions(stream=stream, live=False, every_updates=1)
    previous = progress_display.configure(**vars(options))
    try:
        config = RunConfig(model_dir=str(model_dir), train_distribute=strategy, save_summary_steps=summary_steps,
                           tpu_config=TPUConfig(iterations), **config)
        estimator = TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=BATCH)
        estimator.train(m.train_input_fn(*m.dataset(ROWS)), max_steps=steps, hooks=[hook])
    finally:
        progress_display.configure(**vars(previous))
    return stream.getvalue(), hook


def scalars(model_dir) -> dict[str, dict[int, float]]:
    """{tag: {step: value}} of model_dir's own event files (not eval's)."""
    found: dict[str, dict[int, float]] = {}
    for path in glob.glob(os.path.join(str(model_dir), "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                number = value.simple_value if value.HasField("simple_value") else tf.make_ndarray(value.tensor)
                found.setdefault(value.tag, {})[event.step] = float(number)
    return found


def check_accuracy(model_dir, text: str, hook: LoopMetrics, steps: int = 6, iterations: int = 3,
                   summary_steps: int = 1) -> None:
    events = scalars(model_dir)
    assert set(events["accuracy"]) == set(events["loss"]) == set(range(1, steps + 1, summary_steps))
    for step, value in events["accuracy"].items():
        assert value == pytest.approx(batch_accuracy(step), abs=1e-7), step
    # Each loop's value is the mean over its steps, on the progress line and in LoopInfo.
    expected = {end: np.mean([batch_accuracy(s) for s in range(end - iterations + 1, end + 1)])
                for end in range(iterations, steps + 1, iterations)}
    assert [step for step, _ in hook.seen] == list(expected)
    for step, metrics in hook.seen:
        assert list(metrics) == ["accuracy"] and metrics["accuracy"] == pytest.approx(expected[step], abs=1e-6)
    lines = re.findall(r"train: step (\d+)/\d+ \(\d+%\).*, loss [\d.]+, accuracy ([\d.]+)", text)
    assert [int(step) for step, _ in lines] == list(expected)
    assert all(float(shown) == pytest.approx(expected[int(step)], abs=1e-3) for step, shown in lines)
    assert re.search(rf"train: {steps}/{steps} steps in .*, accuracy [\d.]+$", text.strip())


def test_batch_accuracy_is_the_fraction_of_argmaxes_equal_to_the_labels():
    logits = tf.constant([[2.0, 1.0], [0.0, 3.0], [5.0, 1.0], [1.0, 0.0]])
    assert float(common.batch_accuracy(tf.constant([0, 1, 1, 1]), logits)) == 0.5


def test_the_deterministic_case_is_not_trivial():
    assert len({batch_accuracy(step) for step in (1, 2, 3)}) > 1


def test_training_accuracy_is_written_at_the_loss_steps_and_shown_as_the_loops_mean(tmp_path):
    text, hook = train(tmp_path, summary_steps=2)
    check_accuracy(tmp_path, text, hook, summary_steps=2)  # steps 1, 3, 5: the first, then every 2


def test_training_accuracy_over_eight_replicas_is_the_global_batchs(tmp_path, eight_replicas):
    text, hook = train(tmp_path, strategy=eight_replicas)
    check_accuracy(tmp_path, text, hook)


def test_training_accuracy_with_an_xla_compiled_step(tmp_path):
    text, hook = train(tmp_path, jit_compile=True)
    check_accuracy(tmp_path, text, hook)


def test_training_accuracy_one_step_per_loop(tmp_path):
    text, hook = train(tmp_path, steps=3, iterations=1)
    check_accuracy(tmp_path, text, hook, steps=3, iterations=1)


def test_a_model_fn_that_reports_nothing_gets_nothing_new(tmp_path):
    text, hook = train(tmp_path, model_fn=m.linear_model_fn)
    assert set(scalars(tmp_path)) == ENGINE_TAGS
    assert "accuracy" not in text and "train: step 3/6" in text
    assert [metrics for _, metrics in hook.seen] == [{}, {}]


def test_report_outside_a_train_step_does_nothing_and_checks_what_it_is_given():
    train_metrics.report("accuracy", tf.constant(1.0))  # no model_fn call: nothing, no error
    from estimators.compat.call_context import ModelFnCall, entered

    call = ModelFnCall("train", 1)
    with entered(call):
        train_metrics.report("accuracy", tf.constant(True))
        with pytest.raises(ValueError, match="called twice"):
            train_metrics.report("accuracy", 0.5)
        with pytest.raises(ValueError, match="name other than"):
            train_metrics.report("loss", 0.5)
        with pytest.raises(ValueError, match="needs a scalar"):
            train_metrics.report("per_example", tf.ones([4]))
    assert list(train_metrics.reported(call)) == ["accuracy"]
    weighted, weight = train_metrics.reported(call)["accuracy"]
    assert weighted.dtype == weight.dtype == tf.float32 and (float(weighted), float(weight)) == (1.0, 1.0)
    evaluation = ModelFnCall("eval", 1)
    with entered(evaluation):
        train_metrics.report("accuracy", 1.0)
    assert train_metrics.reported(evaluation) == {}


def test_a_replica_is_weighted_by_what_it_reports_and_an_empty_one_counts_for_nothing():
    """With a short last global batch replicas hold 3, 1 or no rows: the engine sums value x weight and weight
    over replicas, so the classifiers (weight: their rows) show the global batch's accuracy, never NaN."""
    from estimators.compat.call_context import ModelFnCall, entered

    contributions = []
    for accuracy, rows in ((2 / 3, 3), (0.0, 1), (float("nan"), 0)):
        call = ModelFnCall("train", 1)
        with entered(call):
            train_metrics.report("accuracy", accuracy, weight=rows)
        contributions.append([float(t) for t in train_metrics.reported(call)["accuracy"]])
    total, rows = np.sum(contributions, axis=0)
    assert (total, rows) == (pytest.approx(2.0), 4.0)  # 2 right of 4 rows: 0.5, where a plain mean gives NaN


def test_batch_accuracy_takes_column_labels_and_an_empty_batch():
    logits = tf.constant([[2.0, 1.0], [0.0, 3.0]])
    assert float(common.batch_accuracy(tf.constant([[0], [0]]), logits)) == 0.5
    assert float(common.batch_accuracy(tf.zeros([0], tf.int32), tf.zeros([0, 2]))) == 0.0
