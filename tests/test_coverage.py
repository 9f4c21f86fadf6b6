"""XLA coverage: per-entry op counts, auto-clustering detection, the summary line and --min-coverage."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from helpers import REPO, run_json, run_without_tf, run_xlalint

from xlalint.engine.coverage import auto_jit_sites, below, coverage, summary_lines
from xlalint.core.results import Entry, Finding, Report

# fixtures/coverage/model.py, counted by hand (arguments, constants and identities do no work):
#   scaled  (jit_compile=True): Mul, AddV2, Sum        -> 3 ops, all under XLA
#   shifted (no jit_compile):   Sub, Relu              -> 2 ops, ready for jit_compile=True
#   printed (no jit_compile):   Exp, StringFormat, PrintV2 -> 3 ops, blocked (XLA001)
HAND_COUNTED = [("scaled", "jit_compile", True, 3, 3), ("shifted", None, True, 2, 0), ("printed", None, False, 3, 0)]


@pytest.mark.tf
def test_coverage_of_traced_entries_matches_the_hand_count(tmp_path):
    report, code = run_json("fixtures/coverage/model.py", "--min-coverage", "40", "--cache-dir", str(tmp_path))
    data = report["coverage"]
    assert [(e["name"], e["xla"], e["ready"], e["ops"], e["ops_under_xla"])
            for e in data["files"][0]["by_entry"]] == HAND_COUNTED
    assert {k: data[k] for k in ("entries", "xla_on", "ready", "ops", "ops_under_xla", "percent")} == \
        {"entries": 3, "xla_on": 1, "ready": 1, "ops": 8, "ops_under_xla": 3, "percent": 37.5}
    assert [e["ops"] for e in report["entries"]] == [3, 2, 3]
    assert code == 1
    # the text summary and the gate, from the cache this time
    done = run_xlalint("fixtures/coverage/model.py", "--min-coverage", "40", "--cache-dir", str(tmp_path))
    assert "XLA on for 1 of 3 entries, 37% of ops; 1 more is ready for jit_compile=True\n" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "xlalint: XLA coverage 37.5% of ops is below --min-coverage 40%"
    done = run_xlalint("fixtures/coverage/model.py", "--min-coverage", "37.5", "-q", "--cache-dir", str(tmp_path))
    assert done.stderr == ""


@pytest.mark.tf
def test_progress_lines_in_a_log_and_quiet(tmp_path):
    done = run_xlalint("fixtures/coverage/model.py", "fixtures/multi_blocker.py", "--no-cache", "--jobs", "1")
    lines = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert [re.sub(r" \d+\.\d s$", " T s", line) for line in lines] == \
        ["[1/2] fixtures/coverage/model.py T s", "[2/2] fixtures/multi_blocker.py T s"], done.stderr
    assert "\r" not in done.stderr and "\033" not in done.stderr


@pytest.mark.tf
def test_auto_clustering_found_in_a_script_counts_its_predicted_share():
    # train.py::step: Sin, Mul, AddV2, Cos, Sub, Unique, Sum = 7 ops. Unique is never auto-clustered;
    # the Sum after it would be a cluster of one op (under 4: dropped): 5 ops are compiled.
    done = run_xlalint("fixtures/coverage_autojit", "-q")
    summary = done.stdout.split("file errors\n", 1)[1].splitlines()
    assert summary[:2] == [
        "XLA on for 1 of 1 entries, 71% of ops; 1 more is ready for jit_compile=True",
        "auto-clustering is turned on at fixtures/coverage_autojit/run.sh:3: its predicted share of each "
        "entry's ops counts as under XLA",
    ]


@pytest.mark.parametrize("line, on", [
    ("tf.config.optimizer.set_jit(True)", True),
    ("tf.config.optimizer.set_jit('autoclustering')", True),
    ("tf.config.optimizer.set_jit(enabled=True)", True),
    ("tf.config.optimizer.set_jit(False)", False),
    ('os.environ["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"', True),
    ("ENV TF_XLA_FLAGS=--tf_xla_auto_jit=fusible", True),
    ("export TF_XLA_FLAGS=--tf_xla_auto_jit=single-gpu(2)", True),
    ("export TF_XLA_FLAGS=--tf_xla_auto_jit=0", False),
    ("export TF_XLA_FLAGS=--tf_xla_auto_jit=-1", False),
    ("# TF_XLA_FLAGS=--tf_xla_auto_jit=2", False),
    ("x = 1  # set_jit(True)", False),
])
def test_auto_clustering_settings(tmp_path, line, on):
    path = tmp_path / "Dockerfile"
    path.write_text(f"FROM python\n{line}\n")
    assert auto_jit_sites([str(path)]) == ([f"{path}:2"] if on else [])


def _entry(name: str, verdict: str, ops: int | None, jit: bool | None = None) -> Entry:
    return Entry("a.py", name, 1, verdict, ops=ops, jit_compile=jit)


def _auto_clustered(name: str, compiled: int, total: int, chosen: int = 0) -> Entry:
    share = {"compiled_ops": compiled, "total_ops": total, "chosen_ops": chosen}
    return replace(_entry(name, "compatible", 10), xla_mode="auto-clustering", autocluster=share)


def test_coverage_arithmetic_without_tensorflow():
    keras = Finding("XLA301", "keras-layer-disables-xla", "warning", "m", "h", "a.py", 3, 1, "model")
    report = Report(device="gpu", findings=[keras], entries=[
        _entry("on", "compatible", 199, jit=True),
        _entry("on_but_blocked", "incompatible", 40, jit=True),  # fails to compile: nothing runs under XLA
        _entry("model", "compatible", 1),  # Keras keeps XLA off: not ready
        _entry("untraced", "unknown", None),
    ])
    assert summary_lines(report) == ["XLA on for 2 of 4 entries, 82% of ops"]
    data = coverage(report)
    assert (data["ops"], data["ops_under_xla"], data["ready"], data["percent"]) == (240, 199, 0, 82.9)
    assert below(report, 83) == "XLA coverage 82.9% of ops is below --min-coverage 83%"
    assert below(report, 82.9) is None
    report.entries = [_entry("on", "compatible", 200, jit=True), _entry("off", "compatible", 1)]
    assert summary_lines(report) == ["XLA on for 1 of 2 entries, 99% of ops; 1 more is ready for jit_compile=True"]
    report.auto_jit = ["run.sh:1"]
    report.entries = [_auto_clustered("auto", 2, 4, chosen=1), _auto_clustered("a2", 0, 0)]
    assert coverage(report)["files"][0]["by_entry"][0]["ops_under_xla"] == 7  # 10 * 2/3 (jit_scope's op not lost)
    assert summary_lines(report)[0] == "XLA on for 2 of 2 entries, 35% of ops; 2 more are ready for jit_compile=True"


def test_no_coverage_line_without_traced_entries():
    report = Report(device="gpu", entries=[_entry("f", "compatible", None)])
    assert summary_lines(report) == [] and below(report, 100) is None


def test_min_coverage_is_refused_with_static():
    done = run_without_tf("--static", "--min-coverage", "50", str(REPO / "fixtures/coverage"))
    assert done.returncode == 2 and "--min-coverage need tracing" in done.stderr
