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
    from xlalint.ci.shards import Shard

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


def _documented_matrix() -> dict:
    """The matrix workflow of docs/ci.md, as a user copies it."""
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs/ci.md").read_text(), re.S)
    [workflow] = [w for w in map(yaml.safe_load, blocks) if isinstance(w, dict) and "merge" in w.get("jobs", {})]
    return workflow


def _shard_job(job: dict, shard: int, checkout: Path, artifacts: Path, env: dict) -> int:
    """One job of the matrix: its xlalint step as action.yml runs it, the action's gate, the artifact upload."""
    [step] = [s for s in job["steps"] if s.get("id") == "xlalint"]
    inputs = {k: str(v).replace("${{ matrix.shard }}", str(shard)) for k, v in step["with"].items()}
    command, step_env = _step_env(yaml.safe_load((REPO / "action.yml").read_text()), inputs)
    outputs = checkout.parent / f"outputs-{shard}.txt"
    done = subprocess.run(["bash", "-c", command.replace("python ", f"{sys.executable} ", 1)], cwd=checkout,
                          env={**env, **step_env, "GITHUB_OUTPUT": str(outputs)}, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    [upload] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert upload["with"]["path"] == "${{ steps.xlalint.outputs.json }}"
    shutil.copy(checkout / values["json"], artifacts / values["json"])
    return int(values["exit-code"])


@pytest.mark.tf  # the shard that holds model.py traces it
def test_the_documented_matrix_merges_into_the_one_run_report(tmp_path):
    """docs/ci.md's workflow run job by job outside GitHub: four shard jobs, each on a fresh checkout, upload
    their JSON reports; the merge job downloads them all into its own checkout and runs its commands. Its
    SARIF and annotations are a single run's, and so is its exit code; each shard job fails on its own files."""
    workflow = _documented_matrix()
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(REPO / "fixtures/coverage/model.py", source / "model.py")
    for i in range(5):
        (source / f"broken_{i}.py").write_text(f"import tensorflow as tf\ndef f{i}(:\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    shards = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    gates = {}
    for shard in shards:
        checkout = tmp_path / f"job-{shard}" / "repo"
        shutil.copytree(source, checkout)
        gates[shard] = _shard_job(workflow["jobs"]["shard"], shard, checkout, artifacts, env)
    assert len(os.listdir(artifacts)) == len(shards) == 4

    merge = tmp_path / "merge" / "repo"
    shutil.copytree(source, merge)
    for name in os.listdir(artifacts):  # download-artifact, merge-multiple: every file into the checkout
        shutil.copy(artifacts / name, merge / name)
    xlalint = f"{sys.executable} -m xlalint "
    ran, failed = [], False
    for step in workflow["jobs"]["merge"]["steps"]:
        if "run" not in step or "pip install" in step["run"] or (failed and step.get("if") != "always()"):
            continue  # as GitHub does: after a failed step, only the steps marked always() run
        ran.append(subprocess.run(["bash", "-c", step["run"].replace("xlalint ", xlalint, 1)], cwd=merge,
                                  env=env, capture_output=True, text=True, timeout=120))
        failed = failed or ran[-1].returncode != 0
    sarif_merge, github_merge = ran

    def one_run(fmt: str) -> subprocess.CompletedProcess:
        return subprocess.run([*xlalint.split(), "--format", fmt, "."], cwd=source, env=env, capture_output=True,
                              text=True, timeout=600)

    sarif, github = one_run("sarif"), one_run("github")
    assert sarif_merge.returncode == sarif.returncode == github_merge.returncode == github.returncode != 0
    assert (merge / "xlalint.sarif").read_text() == sarif.stdout.replace(source.as_uri(), merge.as_uri())
    assert github_merge.stdout == github.stdout and "error file=model.py,line=19" in github.stdout
    held = {}
    for shard in shards:
        report = json.loads((artifacts / f"xlalint-shard-{shard}-of-4.json").read_text())
        held[shard] = {e["path"] for e in report["entries"] + report["errors"]}
    assert sorted(set().union(*held.values())) == sorted(os.listdir(source))
    assert sum(map(len, held.values())) == len(os.listdir(source))  # each file in exactly one shard
    assert {s: gates[s] != 0 for s in shards} == {s: bool(held[s]) for s in shards}  # every file here fails
