"""The code stays ruff-clean (the rules are in pyproject.toml), checked by the ruff version the test extra pins.

Ruff's rules change between versions: another version can flag code the pinned one accepts (or the
reverse), so the check runs only with the pinned version and says how to get it otherwise.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUFF = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")


def pinned_version() -> str:
    """The ruff version setup.py's `test` extra pins (ruff==X.Y.Z)."""
    with open(os.path.join(ROOT, "setup.py")) as f:
        match = re.search(r'"ruff==([0-9.]+)"', f.read())
    assert match, "setup.py's test extra pins ruff with ruff==X.Y.Z"
    return match.group(1)


def installed_version() -> str | None:
    if RUFF is None:
        return None
    done = subprocess.run([RUFF, "--version"], capture_output=True, text=True)
    return done.stdout.split()[-1] if done.returncode == 0 and done.stdout.strip() else None


def test_the_test_extra_pins_ruff():
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned_version())


def test_ruff_finds_nothing():
    pinned, installed = pinned_version(), installed_version()
    if installed != pinned:
        pytest.skip(f"ruff {installed or 'is not installed'}{' installed' if installed else ''}; the rules are "
                    f"checked with ruff {pinned}: pip install ruff=={pinned} (or pip install -e .[test])")
    result = subprocess.run([RUFF, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
