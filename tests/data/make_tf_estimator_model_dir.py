"""Writes a tiny model_dir with the real tf.estimator 2.15, as a user's old run (tests/data/tf_estimator_215_model_dir).

Run with TF 2.15 + tensorflow-estimator 2.15 (the project never imports them):
    /work/ref215/bin/python tests/data/make_tf_estimator_model_dir.py tests/data/tf_estimator_215_model_dir

Three steps of a dense layer with Adam, a checkpoint every step, keep_checkpoint_max=2: model.ckpt-2 and -3
remain, and the `checkpoint` state file holds the absolute paths of the machine that wrote it (as tf.estimator
wrote them). Graph, meta graph and event files are dropped: only checkpoints matter here.
"""

import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1


def model_fn(features, labels, mode):
    logits = v1.layers.dense(features["x"], 2, name="dense")
    loss = tf.reduce_mean(tf.square(logits - labels))
    train_op = v1.train.AdamOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    return tf.data.Dataset.from_tensors(({"x": x}, np.ones([4, 2], np.float32))).repeat()


def main(target):
    model_dir = tempfile.mkdtemp(prefix="tf_estimator_run_")
    config = tf.estimator.RunConfig(save_checkpoints_steps=1, keep_checkpoint_max=2, tf_random_seed=1)
    tf.estimator.Estimator(model_fn, model_dir=model_dir, config=config).train(input_fn, max_steps=3)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    for name in sorted(os.listdir(model_dir)):
        if name == "checkpoint" or (name.startswith("model.ckpt-") and not name.endswith(".meta")):
            shutil.copy(os.path.join(model_dir, name), target)
    print(open(os.path.join(target, "checkpoint")).read())


if __name__ == "__main__":
    main(sys.argv[1])
