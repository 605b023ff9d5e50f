"""The built-in classifiers write their training accuracy to TensorBoard, as Keras fit shows it."""

from __future__ import annotations

import glob
import os

import numpy as np
import tensorflow as tf

from model_fns import common


def _scalars(model_dir: str, tag: str) -> dict[int, float]:
    values = {}
    for path in glob.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    values[event.step] = float(tf.make_ndarray(value.tensor))
    return values


def test_batch_accuracy_is_the_fraction_of_argmaxes_equal_to_the_labels():
    logits = tf.constant([[2.0, 1.0], [0.0, 3.0], [5.0, 1.0], [1.0, 0.0]])
    assert float(common.batch_accuracy(tf.constant([0, 1, 1, 1]), logits)) == 0.5


def test_cnn_training_writes_accuracy_beside_loss_at_the_summary_steps(tmp_path):
    from absl import flags

    import main

    flags.FLAGS.unparse_flags()
    flags.FLAGS(["main.py", "--model=cnn", "--mode=train", f"--model_dir={tmp_path}", "--dataset=synthetic",
                 "--train_batch_size=8", "--iterations_per_loop=1", "--train_steps=3"])
    main.main(["main.py"])
    accuracy = _scalars(str(tmp_path), "accuracy")
    assert set(accuracy) == set(_scalars(str(tmp_path), "loss")) == {1, 2, 3}
    assert all(np.isclose(value * 8, round(value * 8)) for value in accuracy.values())  # k of 8 examples
