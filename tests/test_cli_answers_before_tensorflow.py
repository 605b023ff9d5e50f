"""main.py answers help and command-line mistakes before TensorFlow starts (seconds, not a TF start-up).

Each case runs main.py in a fresh Python and reports, at the moment the process exits, whether
`tensorflow` had been imported: the exit code and that fact are the specification (no timings).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Runs main.py as `python main.py ...` would, then says on stderr whether TensorFlow was imported by then.
_PROBE = """
import runpy, sys
sys.argv = ["main.py", *sys.argv[1:]]
try:
    runpy.run_path("main.py", run_name="__main__")
finally:
    sys.stderr.write("\\ntensorflow imported: %s\\n" % ("tensorflow" in sys.modules))
"""


def _main(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-c", _PROBE, *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def _tensorflow_imported(done: subprocess.CompletedProcess) -> bool:
    return done.stderr.rstrip().splitlines()[-1] == "tensorflow imported: True"


@pytest.mark.parametrize("flag", ["--help", "--helpshort", "--helpfull", "-?"])
def test_help_exits_0_listing_the_flags_without_tensorflow(flag):
    done = _main(flag)
    assert (done.returncode, _tensorflow_imported(done)) == (0, False)
    assert "--train_steps" in done.stdout and "--model" in done.stdout


def test_a_bad_flag_value_exits_2_without_tensorflow():
    done = _main("--mode=trian")
    assert (done.returncode, _tensorflow_imported(done)) == (2, False)
    assert "error: flag --mode=trian" in done.stderr


def test_a_misspelt_flag_name_exits_2_suggesting_the_name_without_tensorflow():
    done = _main("--modle=train")
    assert (done.returncode, _tensorflow_imported(done)) == (2, False)
    assert "Did you mean: mode" in done.stderr


def test_an_unknown_model_exits_2_without_tensorflow():
    done = _main("--model=vgg")
    assert (done.returncode, _tensorflow_imported(done)) == (2, False)
    assert "cnn|resnet" in done.stderr


def test_contradicting_flags_exit_2_without_tensorflow():
    done = _main("--mode=train", "--plot=confusion.png")
    assert (done.returncode, _tensorflow_imported(done)) == (2, False)
    assert "--plot works with" in done.stderr


def test_a_stray_argument_exits_2_without_tensorflow():
    done = _main("train")
    assert (done.returncode, _tensorflow_imported(done)) == (2, False)
    assert "unexpected arguments train" in done.stderr


def test_a_bad_loop_size_exits_2_without_tensorflow():
    done = _main("--iterations_per_loop=bad")
    assert (done.returncode, _tensorflow_imported(done)) == (2, False)
    assert "--iterations_per_loop: " in done.stderr and "'30s'" in done.stderr
