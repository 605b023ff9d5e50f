"""The code stays ruff-clean (the rules are in pyproject.toml)."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUFF = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff not installed (pip install -e .[test])")
def test_ruff_finds_nothing():
    result = subprocess.run([RUFF, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
