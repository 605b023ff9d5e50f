"""Issue 8.7/8.8: SIGTERM or Ctrl-C during train() stops at a step boundary, saves, says how to resume; the
resumed run sees exactly the batches an uninterrupted one would, so it ends with the same weights, bit for bit.

Every run is a tests/crash_worker.py process (a tiny model on a shuffled-but-seeded stream): the signal goes to
a real process while it trains, as a Colab disconnect or a spot-VM preemption would send it.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from estimators.training.preemption import stopping_note
from tests.worker_process import ROOT, Worker, assert_bit_exact, checkpoint_values, env, reference_values, run_to_end

MAX_STEPS = 150


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    return tmp_path_factory.mktemp("references")


def test_sigterm_mid_loop_stops_at_a_step_boundary_saves_and_the_resumed_run_ends_bit_exact(tmp_path, references):
    """Loops of 50 steps of ~10 ms: SIGTERM arrives during step ~55, inside the second loop (steps 51-100)."""
    model_dir = tmp_path / "run"
    loop = ["--iterations_per_loop=50", "--save_steps=50"]
    worker = Worker(model_dir, MAX_STEPS, *loop, "--step_delay_ms=10")
    assert worker.wait_for(lambda e: e["event"] == "step_started" and e["count"] >= 55) is not None
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
    stopped = worker.last("interrupted")
    assert stopped is not None, worker.events[-5:]
    assert 55 <= stopped["step"] < 100  # not at the end of the loop: at the step boundary after the signal
    assert worker.last("loop")["step"] == stopped["step"]  # the steps run are the steps saved: none lost
    assert stopped["checkpoint"] == str(model_dir / f"model.ckpt-{stopped['step']}")
    assert stopped["message"] == (f"Training stopped by SIGTERM at global step {stopped['step']}; checkpoint "
                                  f"{stopped['checkpoint']}. Run the same training again (same model_dir) to "
                                  "resume from there.")
    resumed = Worker(model_dir, MAX_STEPS, *loop)
    assert resumed.wait() == 0 and resumed.last("done")["step"] == MAX_STEPS
    assert resumed.events[0] == {"event": "begin", "step": stopped["step"]}
    assert_bit_exact(checkpoint_values(model_dir), reference_values(references, MAX_STEPS, *loop))


def test_ctrl_c_stops_and_saves_like_sigterm(tmp_path):
    worker = Worker(tmp_path, MAX_STEPS, "--iterations_per_loop=3", "--save_steps=3")
    assert worker.wait_for_event("after_save", step=6) is not None
    worker.signal(signal.SIGINT)
    assert worker.wait() == 0
    stopped = worker.last("interrupted")
    assert stopped is not None and stopped["message"].startswith("Training stopped by SIGINT at global step ")
    assert 6 <= stopped["step"] < MAX_STEPS
    assert worker.last("after_save")["step"] == stopped["step"]
    assert checkpoint_values(tmp_path)["global_step"] == stopped["step"]


def tf_latest_checkpoint(model_dir) -> str:
    import tensorflow as tf

    return tf.train.latest_checkpoint(str(model_dir))


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (Linux: the SigCgt mask in /proc/<pid>/status)."""
    with open(f"/proc/{pid}/status") as f:
        caught = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    return bool(caught >> (signum - 1) & 1)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads signal dispositions from /proc (Linux)")
def test_a_second_ctrl_c_aborts_at_once_and_leaves_the_last_checkpoint_usable(tmp_path):
    """The first Ctrl-C arrives while a (slow) save is about to start; the second one ends the process there.

    The first one says so (a second gives no chance to say anything); the checkpoint state file still names
    the last complete checkpoint, so the same command resumes from it."""
    stderr = tmp_path / "stderr"
    worker = Worker(tmp_path, MAX_STEPS, "--iterations_per_loop=3", "--save_steps=3", "--slow_save_s=5",
                    stderr_path=str(stderr))
    assert worker.wait_for_event("after_save", step=3) is not None
    assert worker.wait_for_event("before_save", step=6) is not None  # now sleeping 5 s before writing step 6
    pid = worker.process.pid
    assert _catches(pid, signal.SIGINT)
    worker.signal(signal.SIGINT)
    deadline = time.monotonic() + 60
    while _catches(pid, signal.SIGINT) or stopping_note("SIGINT") not in stderr.read_text():  # handled and said
        assert time.monotonic() < deadline, "the first SIGINT was never handled"
        time.sleep(0.01)
    worker.signal(signal.SIGINT)
    assert worker.wait() == -signal.SIGINT  # killed by the signal itself: no save, no clean exit
    assert worker.last("interrupted") is None and worker.last("after_save")["step"] == 3
    assert checkpoint_values(tmp_path)["global_step"] == 3
    assert tf_latest_checkpoint(tmp_path).endswith("model.ckpt-3")  # the state file, read as TensorFlow reads it
    assert stderr.read_text().count(stopping_note("SIGINT")) == 1
    assert "press Ctrl-C again to quit at once" in stopping_note("SIGINT")
    resumed = run_to_end(tmp_path, 6, "--iterations_per_loop=3", "--save_steps=3")  # the killed trainer's lock too
    assert resumed.events[0] == {"event": "begin", "step": 3}


def test_main_py_says_how_to_resume_after_sigterm_without_a_traceback(tmp_path):
    model_dir = tmp_path / "run"
    command = [sys.executable, "main.py", "--model=cnn", "--dataset=synthetic", "--mode=train",
               f"--model_dir={model_dir}", "--train_steps=100000", "--train_batch_size=8", "--iterations_per_loop=2",
               "--save_checkpoints_steps=2"]
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        process = subprocess.Popen(command, cwd=ROOT, env=env(), stdout=out, stderr=err)
        deadline = time.monotonic() + 240
        while not (model_dir / "model.ckpt-2.index").exists() and process.poll() is None:
            assert time.monotonic() < deadline, "main.py wrote no checkpoint"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=240)
    output = (tmp_path / "out").read_text() + (tmp_path / "err").read_text()
    assert "Traceback" not in output
    assert "Training stopped by SIGTERM at global step " in output
    assert f"warning: {stopping_note('SIGTERM')}" in output  # at the signal: what happens, what a second one does
    assert "Run the same training again (same model_dir) to resume from there." in output
    assert code > 0  # ended by itself (not by the signal), and not as a successful, finished training
    assert os.path.exists(model_dir / "checkpoint")
