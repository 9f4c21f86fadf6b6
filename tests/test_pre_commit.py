"""The pre-commit hook, installed by pre-commit itself from this repository."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from helpers import REPO


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _try_repo(project, tmp_path, hook):
    return subprocess.run(
        ["pre-commit", "try-repo", str(REPO), hook, "--all-files", "--verbose"],
        cwd=project, capture_output=True, text=True, timeout=1800,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")},
    )


def _files(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(folder).parts}


@pytest.mark.tf  # the full hook installs and runs TensorFlow
def test_hooks_run_from_this_repo_on_a_project(tmp_path):
    """Also on a script and a notebook that train at their top level: nothing trains, nothing is written."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "fixtures/multi_blocker.py", project / "train.py")
    (project / "util.py").write_text("def add(a, b):\n    return a + b\n")
    shutil.copy(REPO / "rules/XLA001/good.py", project / "clean.py")
    for trains in ("loop_checkpoints.py", "train_cells.ipynb"):
        shutil.copy(REPO / "tests/data/check" / trains, project / trains)
    _git(project, "init", "-q")
    _git(project, "add", ".")
    before = _files(project)
    done = _try_repo(project, tmp_path, "xlalint")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # the blockers in train.py fail the hook
    assert "train.py:10:13: XLA001" in output
    assert "train_cells.ipynb:cell 3:6:5: XLA001" in output  # the notebook's tf.print, found as its cell ran
    assert "util.py" not in output.split("xlalint (XLA compatibility)")[-1]  # skipped: no TensorFlow
    assert _files(project) == before  # no checkpoints, logs or cache files in the project
    done = _try_repo(project, tmp_path, "xlalint-static")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "train.py:10:13: XLA001" in output and "static: by API name" in output


def test_full_hook_installs_tensorflow_as_the_tf_extra_does():
    """tensorflow-cpu has no wheels for macOS on ARM: the hook uses the extra's platform markers."""
    import yaml

    from xlalint.settings.config import tomllib  # tomli on Python 3.10

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["tf"]
    assert hooks["xlalint"]["additional_dependencies"] == extra == hooks["xlalint-run"]["additional_dependencies"]
    assert hooks["xlalint-run"]["entry"] == "xlalint run" and hooks["xlalint-run"]["pass_filenames"] is False
    assert "additional_dependencies" not in hooks["xlalint-static"]
