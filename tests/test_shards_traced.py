"""A directory checked whole and as three shards merged: the same report, byte for byte, in every format.

The directory has what orders a report: a helper module whose blocker is found through another
file's entry (in another shard), a stale suppression (a run rule), a shell script (a text rule), a
notebook, a file refused before tracing, a file without entry points (an error after tracing) and a
path that names nothing (every shard reports it). The whole run traces the files and fills a cache;
the shards read it, as CI shards sharing ``actions/cache`` would.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REPO, run_xlalint
from xlalint.cli.main import main

pytestmark = pytest.mark.tf

FIXTURES = ["discovery/helper_blocker.py", "discovery/helper_called.py", "suppressed/suppressed.py",
            "broken/syntax_error.py", "multi_blocker.py", "autocluster/docker/Dockerfile",
            "autocluster/docker/serve.py", "notebooks/blocker_in_cell3.ipynb", "coverage/model.py"]
LIB = """import tensorflow as tf


@tf.function
def describe(x):
    return tf.strings.as_string(x)


def shout(x):
    return tf.strings.upper(tf.strings.as_string(x))  # xlalint: ignore[XLA001]
"""
USER = """import tensorflow as tf

from lib import describe, shout


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def step(x):
    return describe(x), shout(x)
"""
PATHS = [".", "no_entries.py", "missing.py"]
FORMATS = ["json", "sarif", "text"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Each format's report of the whole run and of the merged shards."""
    project = tmp_path_factory.mktemp("project")
    for fixture in FIXTURES:
        target = project / fixture.split("/", 1)[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "fixtures" / fixture, target)
    (project / "lib.py").write_text(LIB)
    (project / "user.py").write_text(USER)
    (project / "scripts").mkdir()
    (project / "scripts/train.sh").write_text("export TF_XLA_FLAGS=--tf_xla_enable_xla_devices\npython train.py\n")
    (project / "util.py").write_text("def add(a, b):\n    return a + b\n")  # no TensorFlow: skipped
    shutil.copy(REPO / "fixtures/broken/no_entries.py", project / "no_entries.py")
    reports = project.parent / f"{project.name}-reports"
    reports.mkdir()
    common = ["--device", "cpu", "-q", "--cache-dir", str(reports / "cache")]
    env = {"PYTHONPATH": str(REPO)}
    whole = {fmt: run_xlalint(*PATHS, "--format", fmt, *common, cwd=project, env=env) for fmt in FORMATS}
    shards = []
    for k in (1, 2, 3):
        done = run_xlalint(*PATHS, "--format", "json", "--shard", f"{k}/3", *common, cwd=project, env=env)
        (reports / f"shard-{k}.json").write_text(done.stdout)
        shards.append((done, str(reports / f"shard-{k}.json")))
    merged = {fmt: _merge_here(project, "--format", fmt, *(path for _, path in shards)) for fmt in FORMATS}
    return {"whole": whole, "merged": merged, "shards": [done for done, _ in shards]}


def _merge_here(project: Path, *args: str) -> subprocess.CompletedProcess:
    """``xlalint merge`` in this process (it needs no TensorFlow), run in ``project`` as a user would."""
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()) as out:
        patch.chdir(project)
        code = main(["merge", *args])
    return subprocess.CompletedProcess(["xlalint", "merge", *args], code, out.getvalue(), "")


@pytest.mark.parametrize("fmt", FORMATS)
def test_merged_shards_give_the_whole_runs_report(runs, fmt):
    assert runs["merged"][fmt].stdout == runs["whole"][fmt].stdout, runs["merged"][fmt].stderr
    assert runs["merged"][fmt].returncode == runs["whole"][fmt].returncode == 1


def test_the_report_has_what_orders_it_and_each_shard_its_own_files(runs):
    whole = json.loads(runs["whole"]["json"].stdout)
    lib = [(f["code"], f["entry"]) for f in whole["findings"] if f["path"] == "lib.py"]
    assert ("XLA001", "step") in lib  # found through user.py's entry
    assert {f["code"] for f in whole["findings"]} >= {"XLA001", "XLA801", "XLA402"}
    assert [e["path"] for e in whole["errors"]] == ["missing.py", "syntax_error.py", "no_entries.py"]
    assert any(e["cell"] for e in whole["entries"]) and whole["coverage"]["auto_clustering"]
    files = [{e["path"] for e in json.loads(done.stdout)["entries"]} for done in runs["shards"]]
    assert all(files) and sum(map(len, files)) == len(set().union(*files)) == len({e["path"] for e in whole["entries"]})
    shard_of = {path: k for k, paths in enumerate(files) for path in paths}
    assert shard_of["lib.py"] != shard_of["user.py"]  # the helper's finding crosses shards
    # lib.py's comment is met only by user.py's trace: unused in lib.py's shard, not in the whole run
    unused = [[(f["path"], f["line"]) for f in json.loads(done.stdout)["findings"] if f["code"] == "XLA801"]
              for done in [runs["whole"]["json"], runs["shards"][shard_of["lib.py"]]]]
    assert ("lib.py", 10) not in unused[0] and ("lib.py", 10) in unused[1]
