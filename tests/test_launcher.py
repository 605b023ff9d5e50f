"""tests/launcher.py's forked children behave as `python ...` children do, as far as the tests can tell."""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests import launcher

ROOT = launcher.ROOT


@pytest.fixture(autouse=True)
def forked(monkeypatch):
    """Every child forked, from the first (the launcher's default starts a zygote on an environment's third)."""
    monkeypatch.setattr(launcher, "_ZYGOTE_AFTER", 0)


def _env(**extra):
    return dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", **extra)


def test_a_child_gets_its_argv_environment_cwd_and_exit_status(tmp_path):
    code = ("import os, sys; print(sys.argv[1:], os.environ['PROBE'], os.getcwd(), sys.path[0] == '', "
            "'tensorflow' in sys.modules); sys.exit(3)")  # tensorflow: imported by the zygote
    done = launcher.run([sys.executable, "-c", code, "a", "b"], cwd=tmp_path, env=_env(PROBE="x"),
                        capture_output=True, text=True, timeout=300)
    assert done.returncode == 3
    assert done.stdout.strip() == f"['a', 'b'] x {tmp_path} True True"


def test_a_child_s_path_is_a_plain_interpreter_s(tmp_path):
    code = "import json, sys; print(json.dumps(sys.path))"
    env = dict(_env(), PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    forked = launcher.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    plain = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert forked.stdout == plain.stdout


def test_an_uncaught_exception_prints_its_traceback_and_exits_1():
    done = launcher.run([sys.executable, "-c", "raise ValueError('boom')"], env=_env(), capture_output=True,
                        text=True, timeout=300)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "ValueError: boom" in done.stderr


def test_a_module_runs_as_main_with_its_atexit_handlers(tmp_path):
    (tmp_path / "probe_module.py").write_text(
        "import atexit, sys\natexit.register(lambda: print('atexit ran'))\n"
        "if __name__ == '__main__':\n    print(sys.argv)\n")
    done = launcher.run([sys.executable, "-m", "probe_module", "z"], cwd=tmp_path, env=_env(), capture_output=True,
                        text=True, timeout=300, check=True)
    assert done.stdout.splitlines() == [f"['{tmp_path / 'probe_module.py'}', 'z']", "atexit ran"]


def test_a_signal_ends_the_child_with_the_negative_signal_number():
    process = launcher.popen([sys.executable, "-c", "import sys, time; print('up', flush=True); time.sleep(300)"],
                             env=_env(), stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "up\n"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == -signal.SIGTERM


def test_sigint_raises_keyboard_interrupt_in_the_child():
    code = ("import time\ntry:\n    print('up', flush=True); time.sleep(300)\n"
            "except KeyboardInterrupt:\n    print('interrupted', flush=True)")
    process = launcher.popen([sys.executable, "-c", code], env=_env(), stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "up\n"
    process.send_signal(signal.SIGINT)
    assert process.stdout.readline() == "interrupted\n"
    assert process.wait(timeout=60) == 0


def test_a_timeout_kills_the_child_and_keeps_its_output():
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        launcher.run([sys.executable, "-c", "import time; print('so far', flush=True); time.sleep(300)"], env=_env(),
                     capture_output=True, text=True, timeout=10)
    assert raised.value.output == "so far\n"
    assert time.monotonic() - started < 120


def test_an_environment_s_first_children_are_plain_processes(monkeypatch):
    monkeypatch.setattr(launcher, "_ZYGOTE_AFTER", 2)
    code = "import sys; print('tensorflow' in sys.modules)"
    seen = [launcher.run([sys.executable, "-c", code], env=_env(FRESH="1"), capture_output=True, text=True,
                         timeout=300).stdout.strip() for _ in range(3)]
    assert seen == ["False", "False", "True"]


def test_other_programs_and_interpreter_flags_go_to_subprocess():
    done = launcher.run([sys.executable, "-I", "-c", "import sys; print(sys.flags.isolated)"], capture_output=True,
                        text=True, timeout=300)
    assert done.stdout.strip() == "1"
