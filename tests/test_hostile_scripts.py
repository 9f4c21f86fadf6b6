"""Scripts that try to change the user's tree, in both commands: the tree stays byte-identical (contents,
modes, times, links) and every run ends within its budget.

Each script of tests/data/hostile/ does one kind of harm at its top level: writing through its own
source, absolute paths (write, remove, rename, chmod, utime, rmtree), relative paths through the
scratch mirror's links, subprocesses and the shell, a forked child writing late, a thread that never
ends with SIGTERM ignored, ``os.chdir("..")`` and back. The check command imports them all in one run;
``xlalint run`` runs them as the commands listed in ``[tool.xlalint] run``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from helpers import REPO, repo_env

pytestmark = pytest.mark.tf  # runs the scripts

HOSTILE = REPO / "tests" / "data" / "hostile"
BUDGET_S = 20  # of the check command's --timeout and of xlalint run's --run-timeout


def _tree(folder) -> dict[str, tuple]:
    """Every entry below ``folder``: its kind, mode, modification time and content (or link target)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        content = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
        found[str(path.relative_to(folder))] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode),
                                                info.st_mtime_ns, content)
    return found


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(HOSTILE, folder)
    (folder / "beside.txt").write_text("kept as it is\n")
    (folder / "data").mkdir()
    (folder / "data" / "values.txt").write_text("1 2 3\n")
    scripts = sorted(p.name for p in HOSTILE.glob("*.py"))
    (folder / "pyproject.toml").write_text(f"[tool.xlalint]\nrun = {json.dumps(scripts)}\n")
    return folder


def _xlalint(folder, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xlalint", *args, "--format", "json"], cwd=folder,
                          capture_output=True, text=True, env=repo_env(), timeout=BUDGET_S * 20)


def test_the_check_command_leaves_the_tree_as_it_was(project):
    before = _tree(project)
    done = _xlalint(project, ".", "--no-cache", "--device", "cpu", "--timeout", str(BUDGET_S), "--jobs", "2")
    report = json.loads(done.stdout)
    assert _tree(project) == before
    errors = {e["path"]: e["message"] for e in report["errors"]}
    assert errors["endless.py"].startswith(("timed out after 15s while importing (line 10)",  # stopped in its
                                            "timed out after 15s while importing (line 11)"))  # loop, either line
    assert "this write was refused: " in errors["append_own_source.py"] and "(line 4)" in errors["append_own_source.py"]


def test_xlalint_run_leaves_the_tree_as_it_was(project):
    before = _tree(project)
    done = _xlalint(project, "run", "--device", "cpu", "--run-timeout", str(BUDGET_S))
    report = json.loads(done.stdout)
    assert _tree(project) == before
    assert [r["script"] for r in report["runs"]] == sorted(p.name for p in HOSTILE.glob("*.py")), done.stderr
    runs = {r["script"]: r for r in report["runs"]}
    assert runs["endless.py"]["stopped"] == "budget"
    assert [w["path"] for w in runs["goes_up.py"]["refused_writes"]] == ["back.txt"]
