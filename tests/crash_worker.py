"""A training process the crash and preemption tests start, signal and kill: `python -m tests.crash_worker ARGS`.

A tiny softmax regression (Keras Adam, seeded initial weights) trained by an Estimator on a shuffled-but-seeded,
endlessly repeated stream, so the weights after N steps depend on exactly which batches steps 1..N saw, in order.
It reports what it does as JSON lines on stdout (flushed at once), which the tests read while it runs:
  {"event": "begin", "step": S}              training started at global step S (compiled and restored)
  {"event": "loop", "step": S}               a compiled loop ended at global step S
  {"event": "before_save", "step": S}        a checkpoint for step S is about to be written
  {"event": "after_save", "step": S}         ... and has been published
  {"event": "interrupted", "step": S, "checkpoint": P, "message": M}   train() raised TrainingInterrupted
  {"event": "done", "step": S}               train() returned
  {"event": "step_started", "count": N}      (with --step_delay_ms) the N-th step of this process is running
`--hold_after_save` blocks inside the first saving listener call after a save past the starting state
(the graph path saves model.ckpt-0 first, as 2.15 did) until killed: the process then holds the trainer
lock with a trained checkpoint written. `--slow_save_s` sleeps before every save.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from estimators import CrossShardOptimizer, Estimator, EstimatorSpec, ModeKeys, RunConfig, TPUConfig  # noqa: E402
from estimators.training.hooks import Hook, SavingListener  # noqa: E402
from estimators.training.preemption import TrainingInterrupted  # noqa: E402

FEATURES, CLASSES, EXAMPLES, BATCH, SHUFFLE_SEED = 5, 3, 96, 8, 11


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(5)
    x = rng.randn(EXAMPLES, FEATURES).astype("float32")
    y = np.argmax(x[:, :CLASSES] + 0.3 * rng.randn(EXAMPLES, CLASSES), axis=1).astype("int32")
    return x, y


def input_fn():
    """96 examples reshuffled every epoch (seeded: the same order in every process), 12 batches per epoch."""
    x, y = data()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(EXAMPLES, seed=SHUFFLE_SEED,
                                                                  reshuffle_each_iteration=True)
    return dataset.repeat().batch(BATCH, drop_remainder=True)


def eval_input_fn():
    x, y = data()
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(32)


_STEP_DELAY_S = 0.0  # --step_delay_ms: every training step sleeps this long and reports itself


def _step_started() -> np.float32:
    _step_started.count += 1
    emit("step_started", count=_step_started.count)
    time.sleep(_STEP_DELAY_S)
    return np.float32(0.0)


_step_started.count = 0


def model_fn(features, labels, mode):
    layer = keras.layers.Dense(CLASSES, kernel_initializer=keras.initializers.GlorotUniform(seed=3))
    logits = layer(features)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == ModeKeys.TRAIN and _STEP_DELAY_S:
        with tf.control_dependencies([tf.py_function(_step_started, [], tf.float32)]):
            loss = tf.identity(loss)  # the same value: the delay changes no number
    if mode == ModeKeys.TRAIN:
        return EstimatorSpec(mode, loss=loss, train_op=CrossShardOptimizer(keras.optimizers.Adam(0.05)).minimize(loss))
    return EstimatorSpec(mode, loss=loss)


def estimator(model_dir: str, iterations_per_loop: int, save_steps: int) -> Estimator:
    config = RunConfig(model_dir=model_dir, save_checkpoints_steps=save_steps, keep_checkpoint_max=3,
                       log_step_count_steps=10**9, tpu_config=TPUConfig(iterations_per_loop=iterations_per_loop))
    return Estimator(model_fn, config=config)


def emit(event: str, **fields) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class Reporter(Hook):
    def begin(self, step: int) -> None:
        emit("begin", step=step)

    def after_loop(self, info) -> None:
        emit("loop", step=info.step)


class SaveReporter(SavingListener):
    def __init__(self, slow_save_s: float, hold_after_save: bool):
        self._slow, self._hold = slow_save_s, hold_after_save

    def before_save(self, step: int) -> None:
        emit("before_save", step=step)
        if self._slow:
            time.sleep(self._slow)

    def after_save(self, step: int, path) -> None:
        emit("after_save", step=step)
        if self._hold and step > 0:
            time.sleep(600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("--max_steps", type=int, required=True)
    parser.add_argument("--iterations_per_loop", type=int, default=3)
    parser.add_argument("--save_steps", type=int, default=2)
    parser.add_argument("--slow_save_s", type=float, default=0.0)
    parser.add_argument("--hold_after_save", action="store_true")
    parser.add_argument("--step_delay_ms", type=float, default=0.0)
    args = parser.parse_args()
    global _STEP_DELAY_S
    _STEP_DELAY_S = args.step_delay_ms / 1000
    est = estimator(args.model_dir, args.iterations_per_loop, args.save_steps)
    try:
        est.train(input_fn, max_steps=args.max_steps, hooks=[Reporter()],
                  saving_listeners=[SaveReporter(args.slow_save_s, args.hold_after_save)])
    except TrainingInterrupted as stopped:
        emit("interrupted", step=stopped.step, checkpoint=stopped.checkpoint, message=str(stopped))
        return
    emit("done", step=int(est.get_variable_value("global_step")))


if __name__ == "__main__":
    main()
