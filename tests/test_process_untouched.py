"""What a program sees of the process after our calls return: its logging unchanged (issue 16, item 3)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

_PROGRAM = """
import logging, sys
sys.path.insert(0, {tests!r})
import tensorflow as tf
import estimators
from test_graph_path import eval_input_fn, linear_model_fn, train_input_fn
before = list(logging.getLogger().handlers)
estimator = estimators.Estimator(linear_model_fn, model_dir={model_dir!r})
estimator.train(train_input_fn, steps=2)
estimator.evaluate(eval_input_fn)
tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
tf.get_logger().info("one line from the user")
print("ROOT_HANDLERS", before, logging.getLogger().handlers)
"""


def test_training_adds_no_root_logging_handler_so_tensorflow_lines_print_once(tmp_path):
    tests = str(pathlib.Path(__file__).resolve().parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pathlib.Path(tests).parent), tests]))
    done = subprocess.run([sys.executable, "-c", _PROGRAM.format(tests=tests, model_dir=str(tmp_path))],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ROOT_HANDLERS [] []" in done.stdout
    assert done.stderr.count("one line from the user") == 1
