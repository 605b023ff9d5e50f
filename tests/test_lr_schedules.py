"""Learning-rate schedules: the rate at a step is the documented formula, in the optimizer and in TensorBoard."""

from __future__ import annotations

import glob
import math
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from absl import flags

import main
from model_fns import common, resnet
from model_fns.lr_schedules import WarmupSchedule

FLAGS = flags.FLAGS


def formula(step: int, base: float, schedule: str, train_steps: int, warmup: int) -> float:
    """model_fns/lr_schedules.py's docstring, written out independently."""
    if schedule == "constant":
        rate = base
    elif schedule == "step":
        boundaries = (max(1, train_steps // 2), max(2, train_steps * 3 // 4))
        rate = base * 0.1 ** sum(step > b for b in boundaries)
    else:
        progress = min(max((step - warmup) / (train_steps - warmup), 0.0), 1.0)
        rate = base * 0.5 * (1 + math.cos(math.pi * progress))
    return rate * (step / warmup if warmup and step < warmup else 1.0)


STEPS = (0, 1, 5, 9, 10, 11, 49, 50, 51, 74, 75, 76, 99, 100, 150)


@pytest.mark.parametrize("schedule", ["constant", "step", "cosine"])
@pytest.mark.parametrize("warmup", [0, 10])
def test_rate_at_each_step_is_the_formula(schedule, warmup):
    rate = WarmupSchedule(0.4, schedule, train_steps=100, warmup_steps=warmup)
    got = [float(rate(tf.constant(step, tf.int64))) for step in STEPS]
    np.testing.assert_allclose(got, [formula(s, 0.4, schedule, 100, warmup) for s in STEPS], rtol=1e-6, atol=1e-7)


def test_resnet_paper_schedules_are_unchanged():
    step = resnet.learning_rate_schedule(dict(resnet.DEFAULT_PARAMS, train_steps=1000))
    piecewise = keras.optimizers.schedules.PiecewiseConstantDecay([500, 750], [0.1, 0.01, 0.001])
    cosine = resnet.learning_rate_schedule(dict(resnet.DEFAULT_PARAMS, lr_schedule="cosine", train_steps=100))
    keras_cosine = keras.optimizers.schedules.CosineDecay(0.1, decay_steps=100)
    for s in (0, 500, 501, 750, 751, 999):
        assert float(step(s)) == pytest.approx(float(piecewise(s)), rel=1e-6)
    for s in (0, 25, 50, 99, 100, 120):
        assert float(cosine(s)) == pytest.approx(float(keras_cosine(s)), rel=1e-6, abs=1e-9)


def test_learning_rate_scales_with_global_batch_when_asked():
    params = dict(resnet.DEFAULT_PARAMS, scale_learning_rate=True)
    assert float(resnet.learning_rate_schedule(params, global_batch_size=1024)(0)) == pytest.approx(0.8)


def test_constant_rate_without_warmup_stays_a_plain_float():
    assert common.learning_rate({"learning_rate": 1e-3}) == 1e-3
    assert common.learning_rate({"learning_rate": 1e-3, "lr_schedule": "constant", "warmup_steps": 0}) == 1e-3


def test_the_optimizer_reads_the_schedule_at_its_own_step_inside_a_compiled_step(eight_replicas):
    with eight_replicas.scope():
        weight = tf.Variable(1.0)
        optimizer = keras.optimizers.SGD(WarmupSchedule(0.5, "cosine", train_steps=20, warmup_steps=4))
        optimizer.build([weight])

    @tf.function
    def step():
        def replica_step():
            optimizer.apply_gradients([(tf.constant(1.0), weight)])
            return tf.cast(optimizer.learning_rate, tf.float32)

        return eight_replicas.experimental_local_results(eight_replicas.run(replica_step))

    for completed in range(1, 8):
        rates = step()
        assert [float(r) for r in rates] == pytest.approx([formula(completed, 0.5, "cosine", 20, 4)] * 8, rel=1e-6)


@pytest.mark.parametrize(
    ("change", "message"),
    [({"lr_schedule": "linear"}, "'linear'"), ({"train_steps": 0}, "train_steps"),
     ({"warmup_steps": -1}, "warmup_steps"), ({"warmup_steps": 64000}, r"warmup_steps \(64000\) must be less")],
)
def test_bad_schedule_params_are_rejected(change, message):
    with pytest.raises(ValueError, match=message):
        resnet.learning_rate_schedule(dict(resnet.DEFAULT_PARAMS, **change))


def _scalars(model_dir: str, tag: str) -> dict[int, float]:
    values = {}
    for path in glob.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    values[event.step] = float(tf.make_ndarray(value.tensor))
    return values


def test_training_writes_the_scheduled_rate_to_tensorboard(tmp_path):
    FLAGS.unparse_flags()
    FLAGS(["main.py", "--model=cnn", "--mode=train", f"--model_dir={tmp_path}", "--dataset=synthetic",
           "--train_batch_size=8", "--iterations_per_loop=1", "--train_steps=6", "--lr_schedule=cosine",
           "--warmup_steps=2", "--learning_rate=0.01"])
    main.main(["main.py"])
    logged = _scalars(str(tmp_path), "learning_rate")
    # The scalar at global step s is the rate step s used (the schedule at s - 1), as `loss` at s is
    # step s's loss; steps 1..6 each used a rate, the first the warmup's 0.
    assert set(logged) == {1, 2, 3, 4, 5, 6}
    for step, value in logged.items():
        assert value == pytest.approx(formula(step - 1, 0.01, "cosine", 6, 2), rel=1e-6, abs=1e-9), step
