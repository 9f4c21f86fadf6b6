"""Notebooks in the shape of the TensorFlow guides, run by xlalint as Jupyter runs them, against Jupyter's truth.

Each notebook of tests/data/notebooks/ runs for real in IPython's own shell (``notebook_truth.py``: magics,
shell lines, XLA compiling) in one copy of the folder, and under ``xlalint run`` (the notebooks listed in
``[tool.xlalint] run``) and the check command in two others. Both must reach every compiled function,
give the compiler's verdict at the compiler's cell and line, carry the notebook past an ``assert`` that the
zeros of a compiled call would break (and say so), honour ``%env``, ``%cd`` and ``%run``, list the magics
they skipped, and leave their copy as it was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, repo_env
from test_hostile_scripts import _tree

pytestmark = pytest.mark.tf  # runs the notebooks, for real and under xlalint

NOTEBOOKS = REPO / "tests" / "data" / "notebooks"
NAMES = ("function_guide", "project_cells")


def _xlalint(cwd, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "xlalint", *args, "--format", "json", "--device", "cpu"], cwd=cwd,
                          capture_output=True, text=True, env=repo_env(), timeout=900)
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``(truth per notebook, the run's report, the check's report, trees before, trees after)``."""
    truth_dir, run_dir, check_dir = (tmp_path_factory.mktemp(name) for name in ("truth", "run", "check"))
    for folder in (truth_dir, run_dir, check_dir):
        shutil.copytree(NOTEBOOKS, folder, dirs_exist_ok=True)
    listed = ", ".join(f'"{name}.ipynb"' for name in NAMES)
    (run_dir / "pyproject.toml").write_text(f"[tool.xlalint]\nrun = [{listed}]\n")
    before = [_tree(run_dir), _tree(check_dir)]
    truths = [subprocess.Popen([sys.executable, str(REPO / "tests" / "notebook_truth.py"), str(truth_dir / f"{name}.json"),
                                str(truth_dir / f"{name}.ipynb")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
              for name in NAMES]
    try:
        run = _xlalint(run_dir, "run")
        check = _xlalint(check_dir, ".", "--no-cache")
        for truth in truths:
            truth.wait(timeout=900)
    finally:
        for truth in truths:
            truth.kill()
    truth = {name: json.loads((truth_dir / f"{name}.json").read_text()) for name in NAMES}
    return truth, run, check, before, [_tree(run_dir), _tree(check_dir)]


def _compiler_places(truth: dict, name: str) -> dict[tuple, str]:
    """Where the compiler refused an op, as xlalint names places: ``(path, cell, line) -> op``."""
    places = {}
    for outcome in truth[name].values():
        if not outcome["ok"]:
            at = outcome["compiler_at"]
            assert at and outcome["op"], outcome  # every failure of these notebooks is the compiler's
            places[(f"{name}.ipynb", at[1], at[2]) if at[0] == "cell" else (at[0], None, at[1])] = outcome["op"]
    return places


def _error_places(report: dict) -> dict[tuple, str]:
    return {(f["path"], f["cell"]["cell"] if f.get("cell") else None,
             f["cell"]["line"] if f.get("cell") else f["line"]): f["message"]
            for f in report["findings"] if f["severity"] == "error"}


OPS = {"AsString": "AsString", "PyFunc": "PyFunc"}  # the compiler's op -> the op xlalint names


@pytest.mark.parametrize("mode", ["run", "check"])
def test_the_compilers_verdict_at_its_cell_and_line(runs, mode):
    truth, run, check, _, _ = runs
    report = run if mode == "run" else check
    expected = {place: op for name in NAMES for place, op in _compiler_places(truth, name).items()}
    assert len(expected) == 2  # the string op of the guide, the Python callback that %run brought in
    found = _error_places(report)
    assert set(found) == set(expected), (found, expected)
    assert all(OPS[op] in found[place] for place, op in expected.items())


@pytest.mark.parametrize("mode", ["run", "check"])
def test_every_compiled_function_of_the_guide_is_reached_and_judged(runs, mode):
    truth, run, check, _, _ = runs
    report = run if mode == "run" else check
    entries = {e["name"]: e["verdict"] for e in report["entries"] if e["path"] == "function_guide.ipynb"}
    failing = {"describe"} if any(not o["ok"] for o in truth["function_guide"].values()) else set()
    assert entries == {name: "incompatible" if name in failing else "compatible"
                       for name in ("running_total", "batches_in", "describe", "scaled")}


def test_zeros_that_break_an_assert_are_replaced_by_real_values_and_the_run_says_so(runs):
    truth, run, _, _, _ = runs
    assert truth["function_guide"]["6"]["ok"]  # Jupyter passes the assert: the zeros broke it, not the notebook
    [guide] = [r for r in run["runs"] if r["command"] == "function_guide.ipynb"]
    assert guide["stopped"] == "ended"
    assert guide["rerun"].startswith("zeros from `running_total` broke the script at function_guide.ipynb:cell 6:1")
    assert "AssertionError" in guide["rerun"] and "ran again with real values" in guide["rerun"]
    [project] = [r for r in run["runs"] if r["command"] == "project_cells.ipynb"]
    assert project["rerun"] is None and project["stopped"] == "ended"


def test_skipped_magics_are_listed_with_their_cells(runs):
    _, run, _, _, _ = runs
    skipped = {r["command"]: [(s["cell"], s["line"], s["text"]) for s in r["skipped"]] for r in run["runs"]}
    assert skipped == {"function_guide.ipynb": [(2, 1, "!pip --version"), (2, 2, "%load_ext autoreload"),
                                                (2, 3, "%autoreload 2")],
                       "project_cells.ipynb": [(5, 1, "%%bash (the whole cell)")]}


def test_env_cd_and_run_magics_reach_the_helper_as_jupyter_does(runs):
    """``%env``, ``%cd src`` and ``%run helpers.py`` ran: the cell after them read the variable and the
    working directory (it would raise otherwise), and the helper's function was captured at its own file."""
    truth, run, _, _, _ = runs
    assert truth["project_cells"]["3"]["ok"]
    assert {(e["path"], e["name"]) for e in run["entries"]} >= {("src/helpers.py", "sort_scores"),
                                                                ("project_cells.ipynb", "normalise")}


def test_the_trees_stay_as_they_were(runs):
    _, _, _, before, after = runs
    assert after == before
