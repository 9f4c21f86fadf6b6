"""XLA305 in both modes: a compiled function or Keras step over a distribution strategy's variables.

The scripts of tests/data/strategy/ make a ``MirroredStrategy`` over two virtual CPUs at module level. Each
runs for real (``run_truth.py``: XLA compiles, TensorFlow refuses the bad ones at their first step); the
check command sees the strategy and its variables at import (a ``tf.function`` with a signature, a model
made in a module-level ``with strategy.scope():`` or by a builder), and ``xlalint run`` sees them at the
first call. Both report XLA305 at the marked lines, and nothing where the script runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, TESTS, repo_env
from marks import expected

pytestmark = pytest.mark.tf  # runs the scripts, for real and under xlalint

SCENARIOS = TESTS / "data" / "strategy"
NAMES = sorted(p.stem for p in SCENARIOS.glob("*.py"))


def _xlalint(folder, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "xlalint", *args, "--format", "json", "--device", "cpu"],
                            cwd=folder, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=repo_env())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``(truth per script, the check command's report, xlalint run's report)``, all started at once."""
    folders = {name: tmp_path_factory.mktemp(name) for name in ("truth", "check", "run")}
    for folder in folders.values():
        for script in SCENARIOS.glob("*.py"):
            shutil.copy(script, folder)
    (folders["run"] / "pyproject.toml").write_text(
        f"[tool.xlalint]\nrun = {json.dumps([f'{name}.py' for name in NAMES])}\n")
    truth_file = folders["truth"] / "truth.json"
    started = [subprocess.Popen([sys.executable, str(TESTS / "run_truth.py"), str(truth_file), str(folders["truth"]),
                                 *NAMES], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=repo_env()),
               _xlalint(folders["check"], ".", "--no-cache"), _xlalint(folders["run"], "run")]
    try:
        reports = []
        for process in started[1:]:
            out, err = process.communicate(timeout=600)
            assert out.strip(), err
            reports.append(json.loads(out))
        started[0].wait(timeout=600)
    finally:
        for process in started:
            process.kill()
    return json.loads(truth_file.read_text()), *reports


@pytest.mark.parametrize("mode", ["check", "run"])
@pytest.mark.parametrize("name", NAMES)
def test_each_mode_gives_the_compilers_verdict_at_the_marked_line(runs, mode, name):
    truth, report = runs[0][name], runs[1 if mode == "check" else 2]
    marks = {line for code, line in expected(SCENARIOS / f"{name}.py") if code == "XLA305"}
    found = {f["line"] for f in report["findings"] if f["path"] == f"{name}.py" and f["code"] == "XLA305"}
    assert found == marks, report["findings"]
    errors = [f for f in report["findings"] if f["path"] == f"{name}.py" and f["severity"] == "error"]
    if marks:
        assert truth["type"] == "InvalidArgumentError", truth  # "Trying to access resource ... from device ..."
        assert "2 devices (CPU:0, CPU:1)" in next(f["message"] for f in errors if f["code"] == "XLA305")
    else:
        assert truth["ok"] and not errors, (truth, errors)


def test_a_step_over_the_strategys_devices_is_not_offered_jit_compile(runs):
    """Without jit_compile the step runs; with it TensorFlow would refuse it: neither mode counts it ready."""
    for report in runs[1:]:
        rows = [row for file in report["coverage"]["files"] if file["path"] == "without_jit.py"
                for row in file["by_entry"]]
        assert rows and not [row for row in rows if row["ready"]], rows
        assert not [f for f in report["findings"] if f["code"] == "XLA403"]
