"""bench/gpu_check.py runs end to end on the CPU (--cpu_smoke) and says so clearly when no GPU is visible."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "gpu_check.py")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_without_a_gpu_it_stops_with_one_message_saying_what_to_do():
    proc = _run()
    assert proc.returncode == 2
    assert "No GPU is visible to TensorFlow" in proc.stderr and "--cpu_smoke" in proc.stderr
    assert "running" not in proc.stdout


def test_cpu_smoke_measures_every_precision_and_xla_setting_and_the_seed_workload(tmp_path):
    out = tmp_path / "results.json"
    proc = _run("--cpu_smoke", "--json", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads(out.read_text())
    assert [(r["job"]["workload"], r["job"]["precision"]) for r in results] == [
        ("cnn_synthetic", "float32"), ("cnn_synthetic", "float32+xla"), ("cnn_synthetic", "mixed_bfloat16"),
        ("cnn_synthetic", "mixed_bfloat16+xla"), ("seed_cnn_500x1024", "float32")]
    assert all(r["ok"] and r["examples_per_sec"] > 0 and r["steps_trained"] == 4 for r in results)
    assert "| cnn_synthetic | mixed_bfloat16+xla | 2 | ours |" in proc.stdout
    assert "### Speed-up against float32 without XLA" in proc.stdout
    assert "| seed_cnn_500x1024 | CPU | 4 x 16 | 2 |" in proc.stdout


def test_more_gpus_than_visible_fails_every_run_with_the_engines_message():
    proc = _run("--cpu_smoke", "--num_gpus", "1")
    assert proc.returncode == 1
    assert proc.stdout.count("num_gpus=1, but 0 GPU(s) are visible") == 5
