"""The fast tier's one end-to-end run: main.py trains, evaluates, predicts and exports a tiny model.

Synthetic data, batches of 8, two steps: every layer a real run goes through (flags, settings,
registries, input_fn, TPUEstimator, checkpoints, exact evaluation, SavedModel), in seconds.
"""

from __future__ import annotations

import os

import pytest
from absl import flags

import main

pytestmark = pytest.mark.smoke

TINY = ["--model=cnn", "--dataset=synthetic", "--train_batch_size=8", "--eval_batch_size=50",
        "--predict_batch_size=50", "--iterations_per_loop=2", "--train_steps=2", "--eval_steps=1",
        "--predict_limit=1"]


def _main(capsys, *argv: str) -> str:
    flags.FLAGS.unparse_flags()
    flags.FLAGS(["main.py", *TINY, *argv])
    main.main(["main.py"])
    return capsys.readouterr().out


def test_train_and_evaluate_then_predict_and_export(tmp_path, capsys):
    model_dir = str(tmp_path / "model")
    assert "train_and_evaluate: {'accuracy'" in _main(capsys, "--mode=train_and_evaluate", f"--model_dir={model_dir}")
    assert "predict: {'predicted': " in _main(capsys, "--mode=predict", f"--model_dir={model_dir}")
    _main(capsys, "--mode=export", f"--model_dir={model_dir}")
    assert os.listdir(os.path.join(model_dir, "export"))
