"""--verify end to end: the compiler's own verdict next to xlalint's, and what XLA gives."""

from __future__ import annotations

import re

import pytest

from helpers import run_json, run_xlalint
from graph_builder import GraphBuilder
from xlalint.checks import RULES, EntryContext
from xlalint.core.results import Finding
from xlalint.source.sourcemap import Location


@pytest.fixture(scope="module")
def verified() -> dict:
    report, _ = run_json("fixtures/training_step.py", "fixtures/multi_blocker.py", "rules/XLA001/good.py",
                         "--verify", "cpu", "--device", "cpu")
    return report


@pytest.mark.tf
def test_static_verdicts_agree_with_compiling_and_running(verified):
    assert not [f for f in verified["findings"] if f["code"].startswith("XLA9")]
    for entry in verified["entries"]:
        v = entry["verify"]
        assert v["device"] == "CPU:0"
        assert v["compiled"] == (entry["verdict"] == "compatible"), entry["name"]
        print(entry["name"], {k: v[k] for k in ("compile_s", "xla_step_s", "tf_step_s", "speedup")})


@pytest.mark.tf
def test_failure_names_the_op_and_success_measures_numerics(verified):
    by_name = {e["name"]: e["verify"] for e in verified["entries"]}
    failed = by_name["preprocess_and_score"]
    assert failed["error_op"] in {"StringFormat", "PrintV2", "PyFunc", "AsString", "HistogramFixedWidth"}
    assert failed["compile_s"] is None and failed["memory_method"] is None and failed["xla_peak_bytes"] is None
    good = by_name["scale_on_device"]
    assert good["allclose"] is True and good["max_abs_diff"] < 1e-4
    assert good["compile_s"] > 0 and good["xla_step_s"] > 0 and good["speedup"] > 0
    # A step this small may touch no new page at all: then both figures are null, and so is the method
    # (never 0 bytes). tests/test_verify_core.py checks figures that grow with the activations.
    figures = [good["xla_peak_bytes"], good["tf_peak_bytes"]]
    assert all(peak is None or peak > 0 for peak in figures)
    assert good["memory_method"] == ("child-rss-hwm" if any(figures) else None)


@pytest.mark.tf
def test_training_step_is_compared_after_several_steps(verified):
    step = {e["name"]: e["verify"] for e in verified["entries"]}["train_step"]
    assert step["training_step"] is True and step["compiled"] is True and step["allclose"] is True


@pytest.mark.tf
def test_value_specialized_function_compiles_once_per_value(verified):
    entry = {e["name"]: e for e in verified["entries"]}["chunk_sums"]
    assert entry["verify"]["compiled"] is True
    assert [f["code"] for f in verified["findings"] if f["entry"] == "chunk_sums" and f["severity"] != "info"] == [
        "XLA102"]


@pytest.mark.tf
def test_text_output_has_the_verify_table():
    done = run_xlalint("rules/XLA001/good.py", "--verify", "cpu", "--device", "cpu", "-q")
    assert "verify (compiled and run with and without XLA)" in done.stdout
    assert re.search(r"rules/XLA001/good.py::histogram\s+CPU:0\s+yes\s+yes", done.stdout)


def _graph_with(op_type: str):
    b = GraphBuilder()
    b.op("bad", op_type, [b.arg("x")], line=9)
    return b.build()


def agreement_findings(graph, name, verify, findings, fallback, display) -> list[Finding]:
    entry = EntryContext({"name": name, "line": fallback.line, "verify": verify}, graph, fallback.path, tuple(findings))
    return [f for code in ("XLA901", "XLA902") for f in RULES[code].check_entry(entry)]


def test_disagreement_is_its_own_finding_with_both_sides():
    fallback = Location("/src/model.py", 3)
    failed = {"device": "CPU:0", "compiled": False, "error": "Detected unsupported operations: Foo", "error_op": "Foo"}
    (missed,) = agreement_findings(_graph_with("Foo"), "f", failed, [], fallback, str)
    assert (missed.code, missed.severity, missed.line, missed.op_type) == ("XLA901", "error", 9, "Foo")
    assert "failed: Detected unsupported operations" in missed.message
    blocker = Finding("XLA001", "unsupported-op", "error", "m", "h", "/src/model.py", 9, 1, "f")
    ok = {"device": "CPU:0", "compiled": True, "error": None, "error_op": None}
    (false,) = agreement_findings(_graph_with("Foo"), "f", ok, [blocker], fallback, str)
    assert (false.code, false.severity, false.line) == ("XLA902", "warning", 3) and "XLA001" in false.message
    assert agreement_findings(_graph_with("Foo"), "f", failed, [blocker], fallback, str) == []
    silent = Finding("XLA201", "tensor-array-grows", "error", "m", "h", "/src/model.py", 9, 1, "f")
    assert agreement_findings(_graph_with("Foo"), "f", {**ok, "allclose": False}, [silent], fallback, str) == []
    cannot = {**failed, "error": "cannot verify: string arguments"}
    assert agreement_findings(_graph_with("Foo"), "f", cannot, [], fallback, str) == []


@pytest.mark.tf
def test_a_silently_different_result_is_shown_and_confirms_the_rule():
    report, _ = run_json("rules/XLA201/bad.py", "--verify", "cpu", "--device", "cpu")
    assert {e["name"]: (e["verdict"], e["verify"]["compiled"], e["verify"]["allclose"]) for e in report["entries"]} == {
        "squares": ("incompatible", True, False), "fibonacci": ("incompatible", True, False)}
    assert "XLA201" in {f["code"] for f in report["findings"]}
    assert not [f for f in report["findings"] if f["code"] in ("XLA901", "XLA902")]
