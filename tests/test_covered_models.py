"""A discovered Keras model that another entry's successful trace calls is checked as part of that
entry, not traced again on its own; what Keras decides without a trace is still said at its line.

One xlalint run over fixtures/covered/ (the entries of one file named on the command line) is shared by
the tests; the step's blockers and the failing step are asked of the real TensorFlow too.
"""

from __future__ import annotations

import pytest

import groundtruth as gt
from helpers import REPO, run_json

pytestmark = pytest.mark.tf  # every test here traces with TensorFlow

FIXTURES = REPO / "fixtures" / "covered"


@pytest.fixture(scope="module")
def discovered() -> dict:
    folder = str(FIXTURES.relative_to(REPO))
    named = [f"{folder}/named_model.py::{name}" for name in ("model", "step")]
    report, _ = run_json(folder, *named, "--device", "cpu", "--no-cache")
    return report


def _entries(report: dict, name: str) -> dict[str, dict]:
    return {e["name"]: e for e in report["entries"] if e["path"] == f"fixtures/covered/{name}"}


def _findings(report: dict, name: str) -> set[tuple[str, int, tuple[str, ...]]]:
    return {(f["code"], f["line"], tuple(f["entries"])) for f in report["findings"]
            if f["path"] == f"fixtures/covered/{name}"}


def _places(found: set[tuple[str, int, tuple[str, ...]]]) -> set[tuple[str, int]]:
    return {(code, line) for code, line, _ in found}


def test_a_model_the_step_calls_is_checked_in_the_step_and_keeps_its_findings(discovered):
    entries = _entries(discovered, "step_calls_model.py")
    assert list(entries) == ["spare", "train_step"]  # `model` is part of train_step; discovery's order kept
    found = _findings(discovered, "step_calls_model.py")
    assert _places(found) == gt.expected(FIXTURES / "step_calls_model.py")
    # the blockers are the step's; XLA301 (Keras' decision, no trace needed) keeps the model's name
    assert found == {("XLA001", 7, ("train_step",)), ("XLA001", 8, ("train_step",)), ("XLA301", 7, ("model",))}
    assert entries["train_step"]["verdict"] == "incompatible"
    assert gt.compile_error(gt.load_module(FIXTURES / "step_calls_model.py").train_step) is not None
    rows = {r["name"]: r for f in discovered["coverage"]["files"] if f["path"].endswith("step_calls_model.py") for r in f["by_entry"]}
    assert set(rows) == {"spare", "train_step"} and rows["spare"]["ready"] and not rows["train_step"]["ready"]


def test_a_keras_off_layer_of_a_model_the_step_calls_leaves_the_step_ready(discovered):
    """Keras keeps XLA off for the model's own compile (XLA301), but the step runs the model under the
    step's jit_compile, which Keras does not decide: the step stays ready, as the compiler says."""
    assert list(_entries(discovered, "keras_off_layer.py")) == ["train_step"]
    found = _findings(discovered, "keras_off_layer.py")
    assert _places(found) == gt.expected(FIXTURES / "keras_off_layer.py")
    assert ("XLA301", 15, ("model",)) in found  # the model's name: it is no row, so it marks none
    (row,) = [r for f in discovered["coverage"]["files"] if f["path"].endswith("keras_off_layer.py") for r in f["by_entry"]]
    assert (row["name"], row["xla"], row["ready"], row["xla_off"]) == ("train_step", None, True, None)
    module = gt.load_module(FIXTURES / "keras_off_layer.py")
    assert gt.compile_error(module.train_step) is None  # with jit_compile=True it compiles and runs
    with pytest.warns(UserWarning, match="doesn't support `jit_compile=True`"):
        module.model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    assert module.model.jit_compile is False  # Keras' own compile falls back: what XLA301 says


def test_a_model_nothing_calls_is_still_traced(discovered):
    spare = _entries(discovered, "step_calls_model.py")["spare"]
    assert spare["verdict"] == "compatible" and spare["ops"] and spare["ops"] > 0


def test_a_model_named_on_the_command_line_is_traced_on_its_own(discovered):
    entries = _entries(discovered, "named_model.py")
    assert list(entries) == ["model", "step"]  # `step` calls `model`, but both are named
    assert all(e["verdict"] == "compatible" and e["ops"] > 0 for e in entries.values())


def test_a_compiled_model_is_checked_in_its_train_step_with_the_models_it_calls(discovered):
    assert list(_entries(discovered, "compiled.py")) == ["classifier.fit"]
    found = _findings(discovered, "compiled.py")
    assert _places(found) == gt.expected(FIXTURES / "compiled.py")
    assert ("XLA301", 5, ("augment",)) in found  # the augmentation model's layer Keras keeps off XLA
    assert ("XLA302", 5, ("classifier", "classifier.fit")) in found


def test_a_step_whose_trace_fails_leaves_the_model_traced(discovered):
    module = gt.load_module(FIXTURES / "failing_step.py")
    with pytest.raises(ValueError):
        module.broken_step.get_concrete_function()
    entries = _entries(discovered, "failing_step.py")
    assert list(entries) == ["model", "broken_step"]
    assert entries["model"]["verdict"] == "compatible" and entries["model"]["ops"] > 0
    assert entries["broken_step"]["verdict"] == "unknown" and "tracing failed" in entries["broken_step"]["error"]
