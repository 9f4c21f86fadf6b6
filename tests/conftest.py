import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
# Keep the result cache (and anything else xlalint caches) inside this test session.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="xlalint-test-cache-")


def run_xlalint(*args: str, cwd: Path = REPO, env: dict | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """Run the real command line, as a user would (``text=False``: stdout and stderr as bytes)."""
    return subprocess.run(
        [sys.executable, "-m", "xlalint", *args], cwd=cwd, capture_output=True, text=text,
        env={**os.environ, **(env or {})}, timeout=900,
    )


def run_json(*args: str, **kwargs) -> tuple[dict, int]:
    done = run_xlalint(*args, "--format", "json", **kwargs)
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout), done.returncode


@pytest.fixture(scope="session")
def rules_report() -> dict:
    """One xlalint run over every rule example (CPU tables, as the ground truth runs on CPU)."""
    report, _ = run_json("rules", "--device", "cpu")
    return report
