"""What tests share: the repository's paths and the real command line, run as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
NO_TF = TESTS / "no_tf"  # its sitecustomize makes TensorFlow unimportable


def no_tf_path() -> str:
    """PYTHONPATH with the blocking sitecustomize first."""
    return os.pathsep.join(dict.fromkeys(filter(None, [str(NO_TF), *os.environ.get("PYTHONPATH", "").split(os.pathsep)])))


def repo_env(env: dict | None = None) -> dict:
    """A child's environment: this process's, ``env``, and this checkout last on PYTHONPATH, so that
    ``python -m xlalint`` run from any folder imports this checkout, not an installed xlalint."""
    merged = {**os.environ, **(env or {})}
    paths = [path for path in merged.get("PYTHONPATH", "").split(os.pathsep) if path]
    merged["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*paths, str(REPO)]))
    return merged


def _run(args, cwd, env, text) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xlalint", *args], cwd=cwd, capture_output=True, text=text,
                          env=repo_env(env), timeout=900)


def run_xlalint(*args: str, cwd: Path = REPO, env: dict | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """Run the real command line, as a user would (``text=False``: stdout and stderr as bytes)."""
    return _run(args, cwd, env or {}, text)


def _report(done: subprocess.CompletedProcess) -> tuple[dict, int]:
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout), done.returncode


def run_json(*args: str, **kwargs) -> tuple[dict, int]:
    return _report(run_xlalint(*args, "--format", "json", **kwargs))


def run_without_tf(*args: str, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    """The command line with TensorFlow unimportable: for runs that must never need it (static mode, usage)."""
    return _run(args, cwd, {**(env or {}), "PYTHONPATH": no_tf_path()}, True)


def json_without_tf(*args: str, **kwargs) -> tuple[dict, int]:
    return _report(run_without_tf(*args, "--format", "json", **kwargs))


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie does not: it only waits to be reaped). Linux /proc."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return "\nState:\tZ" not in status.read()
    except OSError:
        return False


def wait_for(condition, seconds: float) -> bool:
    """Whether ``condition()`` became true within ``seconds`` (asked every 50 ms)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def parent(pid: int) -> int:
    """The pid of process ``pid``'s parent (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])
