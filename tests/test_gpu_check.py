"""bench/gpu_check.py runs end to end on the CPU (--cpu_smoke) and says so clearly when no GPU is visible."""

import json
import os
import subprocess
import sys

from tests import launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "gpu_check.py")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    return launcher.run([sys.executable, SCRIPT, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def _run_children(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """gpu_check's parent in this process (TensorFlow is already started here), its runs in child processes as
    always (forked from a warm interpreter), which see no GPU: (exit status, stdout). The parent's own GPU check
    is test_without_a_gpu_...'s."""
    from bench import gpu_check
    from bench import launcher as bench_launcher

    monkeypatch.setattr(bench_launcher, "run_process", launcher.run)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    code = gpu_check.main(list(args))
    return code, capsys.readouterr().out


def test_without_a_gpu_it_stops_with_one_message_saying_what_to_do():
    proc = _run()
    assert proc.returncode == 2
    assert "No GPU is visible to TensorFlow" in proc.stderr and "--cpu_smoke" in proc.stderr
    assert "running" not in proc.stdout


def test_cpu_smoke_measures_every_precision_and_xla_setting_and_the_seed_workload(tmp_path, monkeypatch, capsys):
    out = tmp_path / "results.json"
    code, stdout = _run_children(monkeypatch, capsys, "--cpu_smoke", "--json", str(out))
    assert code == 0, stdout[-4000:]
    results = json.loads(out.read_text())
    assert [(r["job"]["workload"], r["job"]["precision"]) for r in results] == [
        ("cnn_synthetic", "float32"), ("cnn_synthetic", "float32+xla"), ("cnn_synthetic", "mixed_bfloat16"),
        ("cnn_synthetic", "mixed_bfloat16+xla"), ("seed_cnn_500x1024", "float32")]
    assert all(r["ok"] and r["examples_per_sec"] > 0 and r["steps_trained"] == 4 for r in results)
    assert "| cnn_synthetic | mixed_bfloat16+xla | 2 | ours |" in stdout
    assert "### Speed-up against float32 without XLA" in stdout
    assert "| seed_cnn_500x1024 | CPU | 4 x 16 | 2 |" in stdout


def test_more_gpus_than_visible_fails_every_run_with_the_engines_message(monkeypatch, capsys):
    code, stdout = _run_children(monkeypatch, capsys, "--cpu_smoke", "--num_gpus", "1")
    assert code == 1
    assert stdout.count("num_gpus=1, but 0 GPU(s) are visible") == 5
