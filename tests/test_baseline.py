"""Baselines: record the findings of an existing codebase, then fail only on new ones."""

from __future__ import annotations

import json
import shutil

import pytest

from helpers import REPO, run_json, run_without_tf, run_xlalint

from xlalint.ci.baseline import apply_baseline, with_fingerprints
from xlalint.core.results import Finding

# fixtures/multi_blocker.py after a change: three lines added at the top (every line moves), the
# `tf.strings.as_string` blocker removed, a second `tf.numpy_function` blocker added.
CHANGED = '''"""One function with several XLA blockers: the compiler names only the first."""
# three lines
# added at
# the top
import numpy as np
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([8, 4], tf.float32), tf.TensorSpec([8], tf.int32)])
def preprocess_and_score(features, label_ids):
    tf.print("batch mean:", tf.reduce_mean(features))  # expect: XLA001
    noisy = tf.numpy_function(lambda a: a + np.float32(0.1), [features], tf.float32)  # expect: XLA001
    doubled = tf.numpy_function(lambda a: a * 2, [noisy], tf.float32)
    counts = tf.histogram_fixed_width(tf.reshape(noisy, [-1]), [0.0, 1.0], nbins=5)  # expect: XLA001
    return tf.reduce_sum(doubled), counts
'''


@pytest.mark.tf
def test_baseline_round_trip_reports_only_the_new_blocker(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "fixtures/multi_blocker.py", project / "train.py")
    cache = str(tmp_path / "cache")
    report, code = run_json("train.py", "--write-baseline", "xlalint-baseline.json", "--cache-dir", cache, cwd=project)
    recorded = json.loads((project / "xlalint-baseline.json").read_text())["findings"]
    assert [(r["code"], r["line"], r["op_type"]) for r in recorded] == [
        ("XLA001", 9, "PrintV2"), ("XLA001", 10, "PyFunc"), ("XLA001", 11, "AsString"),
        ("XLA001", 12, "HistogramFixedWidth")]
    assert (report["findings"], report["baseline"]["unchanged"], code) == ([], 4, 0)

    done = run_xlalint("train.py", "--baseline", "xlalint-baseline.json", "--cache-dir", cache, cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "baseline xlalint-baseline.json: 4 recorded finding(s) not shown, 0 fixed"

    (project / "train.py").write_text(CHANGED)
    report, code = run_json("train.py", "--baseline", "xlalint-baseline.json", "--cache-dir", cache, cwd=project)
    assert code == 1
    assert [(f["code"], f["line"], f["op_type"]) for f in report["findings"]] == [("XLA001", 13, "PyFunc")]
    assert report["baseline"]["unchanged"] == 3
    assert [(r["code"], r["line"], r["op_type"]) for r in report["baseline"]["fixed"]] == [("XLA001", 11, "AsString")]

    done = run_xlalint("train.py", "--baseline", "xlalint-baseline.json", "--cache-dir", cache, cwd=project)
    fixed_message = report["baseline"]["fixed"][0]["message"]
    assert done.stdout.splitlines()[-3:] == [
        "baseline xlalint-baseline.json: 3 recorded finding(s) not shown, 1 fixed",
        f"  fixed: train.py:11 XLA001 {fixed_message}",
        "  refresh it: xlalint --write-baseline xlalint-baseline.json (with the same paths)",
    ]
    assert "train.py:13:" in done.stdout and "train.py:11:" not in done.stdout.split("\n\n")[0]

    done = run_xlalint("train.py", "--baseline", "xlalint-baseline.json", "--format", "sarif", "--cache-dir", cache,
                       cwd=project)
    results = json.loads(done.stdout)["runs"][0]["results"]
    assert [(r["baselineState"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == \
        [("new", 13), ("unchanged", 11), ("unchanged", 12), ("unchanged", 14)]


def _finding(line: int, code: str = "XLA001", path: str = "m.py") -> Finding:
    return Finding(code, "unsupported-op", "error", "msg", "hint", path, line, 5, "f", "PyFunc", "PyFunc")


def test_fingerprints_follow_the_line_text_not_its_number(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("a = 1\n    y = bad(x)\ny = bad(x)\n")
    before = with_fingerprints([_finding(2), _finding(3)], str(tmp_path))
    (tmp_path / "m.py").write_text("# moved\n\n\na = 1\ny   =   bad(x)\n  y = bad(x)\n")
    after = with_fingerprints([_finding(6), _finding(5)], str(tmp_path))
    assert [f.fingerprint for f in after] == [before[1].fingerprint, before[0].fingerprint]
    assert [f.fingerprint.split(":")[1] for f in before] == ["1", "2"]  # same text: told apart by order
    assert len({f.fingerprint.split(":")[0] for f in before}) == 1
    other = with_fingerprints([_finding(5, code="XLA002")], str(tmp_path))[0]
    assert other.fingerprint != after[1].fingerprint


def test_apply_baseline_matches_each_record_once():
    findings = [Finding("XLA001", "n", "error", "m", "h", "m.py", i, 1, "f", fingerprint=fp)
                for i, fp in enumerate(["a:1", "a:1", "b:1"], 1)]
    new, outcome = apply_baseline(findings, [{"fingerprint": "a:1"}, {"fingerprint": "c:1"}], "b.json")
    assert [f.line for f in new] == [2, 3]
    assert [f.line for f in outcome.unchanged] == [1]
    assert outcome.fixed == [{"fingerprint": "c:1"}]


def test_a_bad_baseline_is_a_usage_error_before_tracing(tmp_path):
    (tmp_path / "m.py").write_text("import tensorflow as tf\n")
    done = run_without_tf("m.py", "--baseline", "missing.json", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("xlalint: error: missing.json: cannot read the baseline")
    (tmp_path / "bad.json").write_text('{"version": 99, "findings": []}')
    done = run_without_tf("m.py", "--baseline", "bad.json", cwd=tmp_path)
    assert done.returncode == 2 and "not an xlalint baseline (version 1) file" in done.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.xlalint]\nbaseline = "ci/known.json"\n')
    done = run_without_tf("m.py", cwd=tmp_path)
    assert done.returncode == 2 and "known.json: cannot read the baseline" in done.stderr
