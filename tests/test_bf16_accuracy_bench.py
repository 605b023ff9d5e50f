"""bench/bf16_accuracy.py trains the cnn through main.py in both precisions and evaluates each checkpoint two ways."""

import json
import os
import sys

import tensorflow as tf

from tests import launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "bf16_accuracy.py")


def test_one_seed_trains_float32_and_bfloat16_and_reports_moving_and_batch_statistics(tmp_path):
    out, rows_file = tmp_path / "runs", tmp_path / "rows.json"
    proc = launcher.run(
        [sys.executable, SCRIPT, "--seeds", "3", "--dataset", "synthetic", "--train_steps", "2",
         "--train_batch_size", "16", "--eval_batch_size", "128", "--out", str(out), "--json", str(rows_file)],
        cwd=ROOT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    [row] = json.loads(rows_file.read_text())
    assert row["seed"] == 3
    for precision in ("float32", "bfloat16"):
        assert set(row[precision]) == {"moving", "batch_statistics"}
        assert all(0.0 <= value <= 100.0 for value in row[precision].values())
        model_dir = out / f"s3-{precision}"
        assert tf.train.latest_checkpoint(str(model_dir)).endswith("model.ckpt-2")
        assert f"--precision={precision}" in (model_dir / "flags.txt").read_text()
    assert "| 3 | " in proc.stdout and "batch statistics" in proc.stdout
