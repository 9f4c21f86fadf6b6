"""The GitHub Action's xlalint step, run outside GitHub on a pull request made in a scratch repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import REPO


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _step_env(action: dict, inputs: dict) -> tuple[str, dict]:
    """The xlalint step's command and environment, its ``${{ inputs.* }}`` filled as GitHub would."""
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "xlalint"]
    values = {name: inputs.get(name, spec.get("default", "")) for name, spec in action["inputs"].items()}
    env = {key: re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], value)
           for key, value in step["env"].items()}
    return step["run"], env


def _pull_request(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "ci@example.com")
    _git(repo, "config", "user.name", "ci")
    (repo / "README.md").write_text("project\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    shutil.copy(REPO / "fixtures/coverage/model.py", repo / "model.py")
    (repo / "util.py").write_text("def add(a, b):\n    return a + b\n")  # no TensorFlow: skipped
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "pull request")
    return repo


EXPECTED_SUMMARY = """## xlalint: is XLA on?

XLA is on for **1 of 3** entries; **37.5%** of the traced ops run under XLA; 1 more ready for `jit_compile=True`.
Coverage gate: at least 40% of ops: **failed**.

| file | entries | XLA on | ready | ops | under XLA | coverage |
|---|---:|---:|---:|---:|---:|---:|
| `model.py` | 3 | 1 | 1 | 8 | 3 | 37.5% |

### Blockers per file

- `model.py`: XLA001 ×1

### Ready for `jit_compile=True`

- `model.py::shifted` (line 12, 2 ops)
"""


@pytest.mark.tf  # the action's step traces the pull request's files
def test_action_step_on_a_pull_request(tmp_path):
    repo = _pull_request(tmp_path)
    base = _git(repo, "rev-parse", "HEAD~1")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}}}))
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    command, inputs = _step_env(yaml.safe_load((REPO / "action.yml").read_text()), {"min-coverage": "40"})
    env = {**os.environ, **inputs, "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_EVENT_PATH": str(event), "GITHUB_WORKSPACE": str(repo), "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_OUTPUT": str(outputs), "PYTHONPATH": str(REPO)}
    command = command.replace("python ", f"{sys.executable} ", 1)
    done = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert summary.read_text() == EXPECTED_SUMMARY
    assert dict(line.split("=", 1) for line in outputs.read_text().splitlines()) == {
        "exit-code": "1", "sarif": "xlalint.sarif", "sarif-complete": "true", "category": "xlalint",
        "json": "xlalint.json", "coverage": "37.5"}
    assert json.loads((repo / "xlalint.json").read_text())["coverage"]["percent"] == 37.5
    assert [line.split("::")[1].split(",title")[0] for line in done.stdout.splitlines()] == \
        ["notice file=model.py,line=12,col=1", "error file=model.py,line=19,col=5"]
    assert "[1/1] model.py" in done.stderr and "util.py" not in done.stderr + done.stdout
    sarif = json.loads((repo / "xlalint.sarif").read_text())
    run = sarif["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]] == \
        ["model.py", "model.py"]
    from test_sarif_schema import _validate  # skips here without the official schema (Python 3.10)

    _validate(sarif)


def test_action_step_with_no_python_change(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}}}))
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = {**os.environ, "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
           "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "xlalint.ci.github_action"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert summary.read_text().endswith("No Python file changed in this pull request.\n")
    assert outputs.read_text() == "exit-code=0\nsarif-complete=false\n"


def test_action_step_as_one_shard_of_a_matrix(tmp_path):
    """``shard: K/N``: the shard's files only, reports named after it, its own code scanning category."""
    from xlalint.shards import Shard

    repo = tmp_path / "repo"
    repo.mkdir()
    names = [f"broken_{i}.py" for i in range(6)]
    for name in names:  # refused before tracing: no TensorFlow needed
        (repo / name).write_text("import tensorflow as tf\ndef f(:\n")
    mine = [n for n in names if Shard(2, 3).holds(str(repo / n), str(repo))]
    outputs = tmp_path / "outputs.txt"
    command, inputs = _step_env(yaml.safe_load((REPO / "action.yml").read_text()), {"paths": ".", "shard": "2/3"})
    env = {**os.environ, **inputs, "GITHUB_OUTPUT": str(outputs), "PYTHONPATH": str(REPO)}
    done = subprocess.run(["bash", "-c", command.replace("python ", f"{sys.executable} ", 1)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert dict(line.split("=", 1) for line in outputs.read_text().splitlines()) == {
        "exit-code": "2", "sarif": "xlalint-shard-2-of-3.sarif", "sarif-complete": "false",
        "category": "xlalint/shard-2-of-3", "json": "xlalint-shard-2-of-3.json", "coverage": ""}
    report = json.loads((repo / "xlalint-shard-2-of-3.json").read_text())
    assert sorted(e["path"] for e in report["errors"]) == mine and 0 < len(mine) < len(names)
    assert (report["shard"]["index"], report["shard"]["count"]) == (2, 3)
    sarif = json.loads((repo / "xlalint-shard-2-of-3.sarif").read_text())
    assert sarif["runs"][0]["automationDetails"] == {"id": "xlalint/shard-2-of-3/"}
