"""The rules only a run sees (XLA108, XLA109, XLA110, XLA304, XLA305) and `--first-step`, against real runs.

The truth: each rule's bad.py and good.py run for real, XLA compiling (tests/run_truth.py), which
counts the traces each script prints and keeps TensorFlow's own error. `xlalint run` reports each
bad.py at its marked line, without compiling; one run per script, all at once.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, TESTS
from marks import expected
from xlalint.checks import RULES
from xlalint.fixes.apply import edit

pytestmark = pytest.mark.tf  # each run imports TensorFlow in its own process

RUN_RULES = sorted(code for code, rule in RULES.items() if rule.stage == "captured")
SCENARIO = "needs_real_values"
FIT = "fit_partial_batch"  # XLA108 under Keras fit
LOOP = "retraced_in_dataset_loop"  # XLA109 from a value of a tf.data loop
# the function each example prints "tracing NAME" for
TRACED = {"XLA108": "train_step", "XLA109": "encode", "XLA110": "update"}


def _builds(truth: dict, expected: int) -> bool:
    """The real run built ``expected`` XLA executables; no count where its release's profiler shows none
    (TensorFlow 2.16 and 2.17: ``compare.counts_executables``), and the rest of the evidence holds alone."""
    return truth["xla_builds"] == expected if truth["builds_counted"] else truth["xla_builds"] is None


def _xlalint_run(folder, script: str, *flags: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "xlalint", "run", "--format", "json", "--device", "cpu", "-q",
                             *flags, script], cwd=folder, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``(truth per script, report per run)``: the real runs and `xlalint run`, all started at once."""
    folder = tmp_path_factory.mktemp("run_rules")
    for code in RUN_RULES:
        for kind in ("bad", "good"):
            shutil.copy(REPO / "rules" / code / f"{kind}.py", folder / f"{code}_{kind}.py")
    for name in (SCENARIO, FIT, LOOP):
        shutil.copy(TESTS / "data" / "run" / f"{name}.py", folder)
    truth_file = folder / "truth.json"
    scripts = [f"{code}_{kind}" for code in RUN_RULES for kind in ("bad", "good")] + [SCENARIO, FIT, LOOP]
    # builds are counted on the CPU: a GPU, where there is one, is hidden from the truth
    truth = subprocess.Popen([sys.executable, str(TESTS / "run_truth.py"), str(truth_file), str(folder), "--builds",
                              *scripts], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "PYTHONPATH": str(REPO), "CUDA_VISIBLE_DEVICES": ""})
    started = {code: _xlalint_run(folder, f"{code}_bad.py") for code in RUN_RULES}
    started["fake"] = _xlalint_run(folder, f"{SCENARIO}.py")
    started["first_step"] = _xlalint_run(folder, f"{SCENARIO}.py", "--first-step")
    started[FIT] = _xlalint_run(folder, f"{FIT}.py")
    started[LOOP] = _xlalint_run(folder, f"{LOOP}.py")
    reports = {}
    try:
        for name, process in started.items():
            out, err = process.communicate(timeout=600)
            assert out.strip(), err
            reports[name] = json.loads(out)
        truth.wait(timeout=600)
    finally:
        for process in [truth, *started.values()]:
            process.kill()
    return json.loads(truth_file.read_text()), reports


@pytest.mark.parametrize("code", RUN_RULES)
def test_each_run_rule_is_reported_at_its_marked_line(runs, code):
    report = runs[1][code]
    marks = {line for c, line in expected(REPO / "rules" / code / "bad.py") if c == code}
    assert {f["line"] for f in report["findings"] if f["code"] == code} == marks, report["findings"]


def test_a_step_retraced_by_a_value_of_a_dataset_loop_is_seen_past_the_loops_first_batch(runs):
    """The real program traces and compiles the step once per batch; the run goes on past the loop's first
    batch while each batch traces again, and says so at the def (XLA109)."""
    truth = runs[0][LOOP]
    assert truth["ok"] and truth["traced"]["step"] == 5 and _builds(truth, 5), truth
    marks = {line for code, line in expected(TESTS / "data" / "run" / f"{LOOP}.py") if code == "XLA109"}
    assert {f["line"] for f in runs[1][LOOP]["findings"] if f["code"] == "XLA109"} == marks == {10}


@pytest.mark.parametrize("code", sorted(TRACED))
def test_the_real_program_traces_and_compiles_again_where_the_rule_says(runs, code):
    truth = runs[0]
    name = TRACED[code]
    assert truth[f"{code}_bad"]["ok"] and truth[f"{code}_good"]["ok"], truth
    assert truth[f"{code}_bad"]["traced"][name] >= 2 and truth[f"{code}_good"]["traced"][name] == 1, truth
    assert _builds(truth[f"{code}_bad"], truth[f"{code}_bad"]["traced"][name]), truth  # per trace
    assert _builds(truth[f"{code}_good"], 1), truth
    [finding] = [f for f in runs[1][code]["findings"] if f["code"] == code]
    if code != "XLA108":  # the run stops the loop early: the partial batch is foreseen, not seen
        assert f"{truth[f'{code}_bad']['traced'][name]}" in finding["message"], (finding, truth)


def test_a_variable_from_the_arguments_is_refused_under_xla(runs):
    truth, report = runs[0]["XLA304_bad"], runs[1]["XLA304"]
    assert truth["type"] == "UnimplementedError" and "failed to lift variable creations" in truth["message"]
    calls = [i for i, text in enumerate((REPO / "rules" / "XLA304" / "bad.py").read_text().splitlines(), 1)
             if "running(" in text]
    assert [truth["raised_line"]] == calls and runs[0]["XLA304_good"]["ok"]  # at the first call
    [entry] = report["entries"]
    assert entry["verdict"] == "incompatible" and entry["name"] == "RunningSum.__call__"
    [finding] = [f for f in report["findings"] if f["code"] == "XLA304"]
    assert finding["severity"] == "error" and "Unable to lift tensor" in finding["message"]


def test_a_compiled_function_over_a_strategys_devices_is_refused(runs):
    truth, report = runs[0], runs[1]["XLA305"]
    assert truth["XLA305_bad"]["type"] == "InvalidArgumentError" and "Trying to access resource" in \
        truth["XLA305_bad"]["message"], truth["XLA305_bad"]
    assert truth["XLA305_good"]["ok"] and _builds(truth["XLA305_good"], 2), truth  # per replica
    [entry] = report["entries"]
    assert (entry["name"], entry["verdict"]) == ("distributed_loss", "incompatible")
    [finding] = [f for f in report["findings"] if f["code"] == "XLA305"]
    assert "2 devices (CPU:0, CPU:1)" in finding["message"]


def test_the_partial_batch_is_fixed_by_drop_remainder(runs):
    [finding] = [f for f in runs[1]["XLA108"]["findings"] if f["code"] == "XLA108"]
    assert "1000 elements in batches of 64 leave 40" in finding["message"] and "float32[None,8]" in finding["message"]
    assert finding["fix"]["safety"] == "unsafe" and finding["related"][0]["line"] == 10
    assert any("with (float32[64,8]) from a dataset of (float32[None,8])" in r["message"] for r in finding["related"])
    bad = REPO / "rules" / "XLA108" / "bad.py"
    rule = RULES["XLA108"]
    new, fixed = edit(str(bad), bad.read_bytes(), [rule.finding("", "", str(bad), finding["line"], fixable=True)])
    line = finding["line"] - 1
    assert fixed and new.decode().splitlines()[line].split("#")[0].rstrip() == \
        (REPO / "rules" / "XLA108" / "good.py").read_text().splitlines()[line]


def test_a_partial_batch_under_keras_fit(runs):
    truth, report = runs[0][FIT], runs[1][FIT]
    assert truth["ok"] and _builds(truth, 2), truth  # the full batches, then the last one
    [finding] = [f for f in report["findings"] if f["code"] == "XLA108"]
    assert finding["line"] == 12 and finding["entry"] == "Sequential.train_step", finding
    assert "(float32[None,8], float32[None])" in finding["message"]


def test_the_function_made_per_iteration_names_where_it_is_made(runs):
    [finding] = [f for f in runs[1]["XLA110"]["findings"] if f["code"] == "XLA110"]
    assert [(r["path"], r["line"]) for r in finding["related"] if "made here" in r["message"]] == [
        ("XLA110_bad.py", 14)]
    assert "the run called 4 of them" in finding["message"] and runs[0]["XLA110_bad"]["traced"]["update"] == 4


def test_first_step_gives_the_script_real_values(runs):
    """With --first-step at once; without it, once the zeros of `test_step` broke the script's count (a division
    by zero), the run starts again with real values and says so."""
    truth, fake, real = runs[0][SCENARIO], runs[1]["fake"], runs[1]["first_step"]
    assert truth["ok"]
    assert real["run"]["stopped"] == "ended" and real["run"]["rerun"] is None, real["run"]
    assert fake["run"]["stopped"] == "ended", fake["run"]
    assert fake["run"]["rerun"].startswith("zeros from `test_step` broke the script at needs_real_values.py:")
    assert "ZeroDivisionError" in fake["run"]["rerun"] and "ran again with real values" in fake["run"]["rerun"]
    for report in (fake, real):
        assert {e["name"]: e["verdict"] for e in report["entries"]} == {
            "train_step": "compatible", "test_step": "compatible", "export_step": "compatible"}
