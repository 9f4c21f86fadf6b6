"""The check command on scripts and notebooks that train at their top level, against real runs with XLA on.

Each file of tests/data/check/ runs for real (``run_truth.py``: XLA compiles, the script trains, writes
and downloads as its author wrote it) in one copy of the folder, and is checked by ``xlalint .`` in
another. The check must give the compiler's verdict at the compiler's line, train nothing, leave its
copy byte-identical, keep its budget, and name ``xlalint run`` for what only ``__main__`` reaches.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, repo_env
from test_hostile_scripts import _tree
from xlalint.inputs.notebooks import read_notebook

pytestmark = pytest.mark.tf  # runs the scripts, for real and under xlalint

SCENARIOS = REPO / "tests" / "data" / "check"
SAME_CALL = {"StringFormat": "PrintV2", "PyFunc": "PyFunc", "AsString": "AsString"}  # the compiler's op -> the op xlalint names
TIMEOUT_S = 60


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``(truth per file, the check's report, its copy's tree before, after)``, the two run at once. The
    truth of the notebook is its module (its code cells joined, as xlalint reads it) run as a script."""
    truth_dir, check_dir = tmp_path_factory.mktemp("truth"), tmp_path_factory.mktemp("check")
    for path in SCENARIOS.iterdir():
        shutil.copy(path, check_dir)
        if path.suffix == ".py":
            shutil.copy(path, truth_dir)
    notebook = SCENARIOS / "train_cells.ipynb"
    (truth_dir / "train_cells.py").write_text(read_notebook(str(notebook)).source)
    before = _tree(check_dir)
    names = sorted(p.stem for p in truth_dir.glob("*.py"))
    truth_file = truth_dir / "truth.json"
    truth = subprocess.Popen([sys.executable, str(REPO / "tests" / "run_truth.py"), str(truth_file), str(truth_dir),
                              *names], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        check = subprocess.run([sys.executable, "-m", "xlalint", ".", "--format", "json", "--device", "cpu", "--no-cache",
                                "--jobs", "2", "--timeout", str(TIMEOUT_S)], cwd=check_dir, capture_output=True,
                               text=True, env=repo_env(), timeout=900)
        truth.wait(timeout=900)
    finally:
        truth.kill()
    assert check.stdout.strip(), check.stderr
    return json.loads(truth_file.read_text()), json.loads(check.stdout), before, _tree(check_dir)


def _entries(report: dict, path: str) -> list[dict]:
    return [e for e in report["entries"] if e["path"] == path]


def _error_lines(report: dict, path: str) -> list[tuple[str, int]]:
    return [(f["message"], f["line"]) for f in report["findings"] if f["path"] == path and f["severity"] == "error"]


def test_nothing_trains_and_the_tree_stays_as_it_was(runs):
    _, report, before, after = runs
    assert after == before  # no checkpoints, logs, saved model or download
    assert not [e for e in report["errors"] if "timed out" in e["message"]]  # every import ended within its budget


@pytest.mark.parametrize("name, path, step", [("loop_blocker", "loop_blocker.py", "train_step"),
                                              ("fit_top_level", "fit_top_level.py", "Sequential.train_step"),
                                              ("train_cells", "train_cells.ipynb", "train_step")])
def test_a_blocker_in_a_step_called_at_import_gets_the_compilers_answer_at_its_line(runs, name, path, step):
    truth, report, _, _ = runs
    real = truth[name]
    assert not real["ok"] and real["op"] in SAME_CALL, real  # the real run fails in the compiler
    verdicts = [(e["name"], e["verdict"]) for e in _entries(report, path)]
    assert verdicts.count((step, "incompatible")) == 1 and [n for n, _ in verdicts].count(step) == 1, verdicts
    errors = _error_lines(report, path)
    assert any(line == real["compiler_line"] and SAME_CALL[real["op"]] in message for message, line in errors), (
        errors, real)


def test_a_clean_step_called_at_import_is_compatible_as_the_compiler_says(runs):
    truth, report, _, _ = runs
    assert truth["loop_checkpoints"]["ok"]
    assert [(e["name"], e["verdict"]) for e in _entries(report, "loop_checkpoints.py")] == [
        ("train_step", "compatible")]
    assert not [e for e in report["errors"] if e["path"] == "loop_checkpoints.py"]


def test_a_notebooks_entry_and_finding_sit_at_their_own_cell(runs):
    _, report, _, _ = runs
    [entry] = _entries(report, "train_cells.ipynb")
    assert (entry["cell"]["cell"], entry["cell"]["line"]) == (3, 2)  # the def, in the third cell
    [finding] = [f for f in report["findings"] if f["path"] == "train_cells.ipynb" and f["severity"] == "error"]
    assert (finding["cell"]["cell"], finding["cell"]["line"]) == (3, 6)  # tf.print


def test_a_download_at_import_stops_it_and_says_where(runs):
    truth, report, _, _ = runs
    real = truth["downloads_at_import"]
    assert not real["ok"] and real["raised_line"] == 12  # no network here either
    [error] = [e["message"] for e in report["errors"] if e["path"] == "downloads_at_import.py"]
    assert "get_file" in error and "downloads_at_import.py:12" in error and "no network access" in error


def test_a_download_in_a_notebook_cell_is_named_by_its_cell_and_line(runs):
    [error] = [e["message"] for e in runs[1]["errors"] if e["path"] == "downloads_in_cell.ipynb"]
    assert "get_file` at downloads_in_cell.ipynb:cell 3:5 " in error and "no network access" in error


def test_a_module_a_notebook_writes_with_writefile_is_imported_and_left_out_of_the_tree(runs):
    """Jupyter writes it into the working directory and imports it from there; the tree stays as it was."""
    _, report, before, after = runs
    assert not [e for e in report["errors"] if e["path"] == "writes_a_module.ipynb"]
    assert [(e["name"], e["verdict"]) for e in _entries(report, "writes_a_module.ipynb")] == [("scale", "compatible")]
    assert after == before


def test_next_on_an_epochs_iterator_gets_its_element_as_in_the_real_run(runs):
    """A ``next(it)`` in a range loop is no ``for`` loop over the dataset to end: nothing may raise there."""
    truth, report, _, _ = runs
    assert truth["epochs_of_next"]["ok"]
    assert not [e for e in report["errors"] if e["path"] == "epochs_of_next.py"]
    assert [(e["name"], e["verdict"]) for e in _entries(report, "epochs_of_next.py")] == [("train_step", "compatible")]


def test_real_values_after_zeros_are_the_programs_own(runs):
    """Imported again with real values, a tf.function without XLA runs its traced graph, as in the program:
    tensors out of a converted branch, Python side effects once, at the trace."""
    truth, report, _, _ = runs
    assert truth["real_values_as_traced"]["ok"]
    assert not [e for e in report["errors"] if e["path"] == "real_values_as_traced.py"]
    assert sorted((e["name"], e["verdict"]) for e in _entries(report, "real_values_as_traced.py")) == [
        ("relu", "compatible"), ("remember", "compatible")]


def test_what_only_the_main_block_reaches_names_xlalint_run(runs):
    truth, report, _, _ = runs
    real = truth["main_block"]
    assert not real["ok"] and real["compiler_line"] == 8  # the real run, as __main__, fails there
    [entry] = _entries(report, "main_block.py")
    assert entry["verdict"] == "unknown" and "`xlalint run FILE`" in entry["error"]
    assert "input_signature" not in entry["error"]
    assert any(line == 8 for _, line in _error_lines(report, "main_block.py"))  # found by API name meanwhile


def test_the_run_rules_read_what_the_import_captured(runs):
    """XLA109 from the import's own calls: as many traces as the real run made."""
    truth, report, _, _ = runs
    traces = truth["retraced_at_import"]["traced"]["scaled"]
    assert traces == 5
    [finding] = [f for f in report["findings"] if f["path"] == "retraced_at_import.py" and f["code"] == "XLA109"]
    assert f"traced {traces} times" in finding["message"] and finding["line"] == 7


def test_code_after_a_training_loop_still_runs_and_is_checked(runs):
    """Patience leaves the loop, not the program: the function defined and called after it is captured."""
    truth, report, _, _ = runs
    real = truth["loop_then_more"]
    assert not real["ok"] and real["op"] == "AsString" and real["compiler_line"] == 17, real
    assert sorted((e["name"], e["verdict"]) for e in _entries(report, "loop_then_more.py")) == [
        ("describe", "incompatible"), ("train_step", "compatible")]
    assert ("AsString", 17) in [(f["op_type"], f["line"]) for f in report["findings"]
                                if f["path"] == "loop_then_more.py" and f["severity"] == "error"]
