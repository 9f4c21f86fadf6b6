"""The type checker passes over xlalint/ (mypy, configured in pyproject.toml; no TensorFlow needed)."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO


def test_mypy_finds_no_type_error():
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout
