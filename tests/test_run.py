"""`xlalint run` on training scripts with no annotations, against the same scripts run for real under XLA.

The truth: each scenario script runs for real, bounded, with XLA compiling its steps
(tests/run_truth.py). `xlalint run` must give the same verdict per compiled function, with a
finding at the compiler's line and op, leave the working tree byte for byte as it was, and stop
on its own within its budget.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, TESTS

pytestmark = pytest.mark.tf  # each run imports TensorFlow in its own process

SCENARIOS = TESTS / "data" / "run"
# name: (arguments of the bounded real run, arguments given to `xlalint run`)
RUNS = {
    "string_step": (["--epochs", "1"], ["--epochs", "2"]),
    "clean_loop": (["--epochs", "1"], []),
    "fit_numpy_loss": (["1"], []),
    "endless_checkpoints": (["2"], []),  # without an argument it never ends
    "downloads": ([], []),
    "writes_everywhere": ([], []),
    "prepares_forever": (None, []),  # no real run: it never reaches its step
}
BUDGET_S = {"prepares_forever": "4"}  # else the default


def _tree(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _xlalint_run(folder, name: str, args: list[str]) -> subprocess.Popen:
    budget = ["--run-timeout", BUDGET_S[name]] if name in BUDGET_S else []
    return subprocess.Popen([sys.executable, "-m", "xlalint", "run", "--format", "json", "--device", "cpu",
                             *budget, f"{name}.py", *args], cwd=folder, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``(truth per scenario, (report, exit code) per scenario, tree before, tree after)``; all at once."""
    truth_dir, run_dir = tmp_path_factory.mktemp("truth"), tmp_path_factory.mktemp("run")
    for folder in (truth_dir, run_dir):
        for name in RUNS:
            shutil.copy(SCENARIOS / f"{name}.py", folder)
        (folder / "notes.txt").write_text("kept as it is\n")
    truth_file = truth_dir / "truth.json"
    before = _tree(run_dir)
    started = [subprocess.Popen([sys.executable, str(TESTS / "run_truth.py"), str(truth_file), str(truth_dir),
                                 *(f"{name}:{','.join(real)}" for name, (real, _) in RUNS.items() if real is not None)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        runs = {name: _xlalint_run(run_dir, name, given) for name, (_, given) in RUNS.items()}
        started += runs.values()
        reports = {}
        for name, process in runs.items():
            out, err = process.communicate(timeout=600)
            assert out.strip(), err
            reports[name] = (json.loads(out), process.returncode)
        started[0].wait(timeout=600)
    finally:
        for process in started:
            process.kill()
    return json.loads(truth_file.read_text()), reports, before, _tree(run_dir)


@pytest.mark.parametrize("name", [n for n, (real, _) in RUNS.items() if real is not None and n != "downloads"])
def test_same_verdict_as_the_compiler_at_its_line(runs, name):
    truth, reports = runs[0][name], runs[1][name]
    report, code = reports
    compiled = [e for e in report["entries"] if e["jit_compile"]]
    assert compiled, report["entries"]
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    if truth["ok"]:
        assert {e["verdict"] for e in compiled} == {"compatible"}, report
        assert not errors and code == 0, report
    else:
        assert {e["verdict"] for e in compiled} == {"incompatible"}, report
        at_line = [f for f in errors if f["path"] == f"{name}.py" and f["line"] == truth["compiler_line"]]
        assert any(f["op_name"] == truth["node"] or f["op_type"] == truth["op"] for f in at_line), (truth, errors)
        assert code == 1


def test_every_compiled_function_of_a_loop_is_reached(runs):
    report, _ = runs[1]["clean_loop"]
    assert sorted((e["name"], e["jit_compile"]) for e in report["entries"]) == [("test_step", None),
                                                                                 ("train_step", True)]
    keras_steps = sorted(e["name"] for e in runs[1]["fit_numpy_loss"][0]["entries"])
    assert keras_steps == ["Sequential.test_step", "Sequential.train_step"]  # fit with validation data


def test_the_working_tree_is_unchanged(runs):
    _, reports, before, after = runs
    assert before == after
    assert reports["endless_checkpoints"][0]["run"]["written_to_scratch"] == ["checkpoints", "train.log"]


def test_writes_into_the_tree_are_refused_and_said(runs):
    run = runs[1]["writes_everywhere"][0]["run"]
    assert run["written_to_scratch"] == ["new_log.txt", "notes.txt"]
    assert [(os.path.basename(r["path"]), r["call"], r["where"]) for r in run["refused_writes"]] == [
        ("beside.txt", "open", "writes_everywhere.py:13 in `<lambda>()`"),
        ("exports", "RecursivelyCreateDir", "writes_everywhere.py:14 in `<lambda>()`")]


def test_every_run_stops_on_its_own(runs):
    for name, (report, _) in runs[1].items():
        if name not in BUDGET_S:
            assert report["run"]["stopped"] in ("ended", "captured", "network"), (name, report["run"])


def test_a_run_that_never_reaches_a_step_stops_at_its_budget_and_says_where(runs):
    report, code = runs[1]["prepares_forever"]
    assert report["run"]["stopped"] == "budget" and report["run"]["where"] == "prepares_forever.py:15 in `prepare()`"
    assert [(e["name"], e["verdict"]) for e in report["entries"]] == [("train_step", "unknown")] and code == 0


def test_a_function_without_jit_compile_is_offered_it_with_the_specs_seen(runs):
    report, _ = runs[1]["clean_loop"]
    [offer] = [f for f in report["findings"] if f["code"] == "XLA403"]
    assert offer["entry"] == "test_step" and offer["line"] == 35
    assert "with (float32[64,16], int32[64])" in offer["related"][0]["message"]


def test_a_download_stops_the_run_at_its_call(runs):
    truth, (report, code) = runs[0]["downloads"], runs[1]["downloads"]
    assert not truth["ok"] and report["run"]["stopped"] == "network"
    [error] = report["errors"]
    assert f"downloads.py:{truth['raised_line']}" in error["message"] and "get_file" in error["message"]
    assert [(e["name"], e["line"], e["verdict"]) for e in report["entries"]] == [("train_step", 9, "unknown")]
    assert code == 1


def test_findings_point_at_the_call_with_the_specs_seen(runs):
    report, _ = runs[1]["string_step"]
    [blocker] = [f for f in report["findings"] if f["code"] == "XLA001"]
    assert blocker["related"] == [{"path": "string_step.py", "line": 48,
                                   "message": "`train_step` called here, in `main()`, with (float32[32,8,8], string[32])"}]
