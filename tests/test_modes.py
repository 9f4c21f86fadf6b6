"""What holds in both modes, the check command and ``xlalint run``, against the scripts of tests/data/modes/ run
for real (``run_truth.py``: XLA compiles, counting the executables it builds).

- XLA305: the scripts that make a ``MirroredStrategy`` over two virtual CPUs at module level. TensorFlow refuses
  the compiled ones at their first step; the check command sees the strategy and its variables at import (a
  ``tf.function`` with a signature, a model made in a module-level ``with strategy.scope():`` or by a builder),
  ``xlalint run`` at the first call. Both report XLA305 at the marked lines, and nothing where the script runs.
- Keras' decision before the ops: a model Keras keeps off XLA (a ``TextVectorization`` input) trains without
  XLA, and no entry of its own gets an XLA error.
- Wrappers: ``tf.function(model)``, ``tf.function(layer)`` and ``tf.function(callable_object)`` with
  ``jit_compile=True`` fail in the compiler; ``xlalint run`` captures each at its first call and names the
  failing op with the compiler's line, and the check command traces a module-level ``tf.function(model)``.
- The compiler's line ("The op is created at"): every failing script's error finding carries it, as its place or
  a related place: the line that calls a built-in Keras layer (placed at its construction), the ``tape.gradient``
  call that makes a loop's backward op (placed at the loop).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import TESTS, repo_env
from marks import expected

pytestmark = pytest.mark.tf  # runs the scripts, for real and under xlalint

SCENARIOS = TESTS / "data" / "modes"
NAMES = sorted(p.stem for p in SCENARIOS.glob("*.py"))
WRAPPERS = [name for name in NAMES if name.startswith("wrap_")]
CHECKED_AT_IMPORT = {"wrap_model"}  # its tf.function(model) is made at module level: the check command traces it
PLACED = {"layer_in_step": ("XLA001", "construction"), "gradient_of_loop": ("XLA101", "loop")}  # primary place
# the scripts whose failing function the check command traces itself (a signature): the compiler's line is there
CHECKED_LINES = set(PLACED)


def _xlalint(folder, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "xlalint", *args, "--format", "json", "--device", "gpu"],
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
                                 "--builds", *NAMES], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=repo_env()),
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
@pytest.mark.parametrize("name", [name for name in NAMES if name not in WRAPPERS and name not in PLACED])
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


def test_a_model_keras_keeps_off_xla_trains_and_its_entries_get_no_xla_error(runs, monkeypatch):
    """Keras resolves the text model's jit_compile="auto" to False on a GPU machine (its TextVectorization does
    not support XLA) and the script trains without building an XLA executable: its forward pass (the check
    command) and Keras' steps (``xlalint run``) get no XLA error, and the decision is said at the layer."""
    truth = runs[0]["text_model"]
    assert truth["ok"] and truth["xla_builds"] == 0, truth
    model = gt.load_module(SCENARIOS / "text_model.py").model
    gpu, listed = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU"), tf.config.list_physical_devices
    monkeypatch.setattr(tf.config, "list_physical_devices",
                        lambda kind=None: listed(kind) + ([gpu] if kind in (None, "GPU") else []))
    assert model._resolve_auto_jit_compile() is False  # noqa: SLF001 - Keras' own resolution of "auto"
    layer_line = next(n for n, line in enumerate((SCENARIOS / "text_model.py").read_text().splitlines(), 1)
                      if "TextVectorization(" in line)
    for report, code in ((runs[1], "XLA301"), (runs[2], "XLA302")):
        entries = [e for e in report["entries"] if e["path"] == "text_model.py"]
        assert entries and {e["verdict"] for e in entries} == {"compatible"}, entries
        assert all("text_vectorization" in (e["xla_off"] or "") for e in entries), entries
        findings = [(f["code"], f["line"]) for f in report["findings"] if f["path"] == "text_model.py"]
        assert findings == [(code, layer_line)], findings


@pytest.mark.parametrize("name", WRAPPERS)
def test_a_tf_function_of_an_object_is_captured_and_its_failing_op_named_with_the_compilers_line(runs, name):
    truth = runs[0][name]
    assert not truth["ok"] and truth["op"] and truth["compiler_file"] == f"{name}.py", truth
    for report in [runs[2]] + ([runs[1]] if name in CHECKED_AT_IMPORT else []):
        [entry] = [e for e in report["entries"] if e["path"] == f"{name}.py"]
        assert (entry["verdict"], entry["jit_compile"]) == ("incompatible", True), entry
        errors = [f for f in report["findings"] if f["path"] == f"{name}.py" and f["severity"] == "error"]
        assert [f["op_type"] for f in errors] == [truth["op"]], errors


@pytest.mark.parametrize("name", sorted(set(WRAPPERS) | set(PLACED)))
def test_each_error_finding_carries_the_compilers_line(runs, name):
    """As its place or a related place; each mode that reports the failing function (the check command: where it
    traces that function's own code)."""
    truth = runs[0][name]
    assert not truth["ok"] and truth["compiler_file"] == f"{name}.py" and truth["compiler_line"], truth
    for report in [runs[2]] + ([runs[1]] if name in CHECKED_LINES else []):
        errors = [f for f in report["findings"] if f["path"] == f"{name}.py" and f["severity"] == "error"]
        assert errors, report["findings"]
        for error in errors:
            assert truth["compiler_line"] in [error["line"], *(r["line"] for r in error["related"])], (error, truth)


@pytest.mark.parametrize("name", sorted(PLACED))
def test_a_layers_or_a_gradients_op_is_placed_where_the_user_changes_it(runs, name):
    """A built-in layer's op at the layer's construction, a loop's backward op at the loop (docs/rules.md)."""
    code, place = PLACED[name]
    lines = (SCENARIOS / f"{name}.py").read_text().splitlines()
    expected = next(n for n, line in enumerate(lines, 1)
                    if ("MixUp()" in line if place == "construction" else line.lstrip().startswith("while ")))
    for report in runs[1:]:
        assert [f["line"] for f in report["findings"] if f["path"] == f"{name}.py" and f["code"] == code] == [
            expected], report["findings"]
