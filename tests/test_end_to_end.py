"""xlalint on whole files, checked against the real compiler where it gives a verdict."""

from __future__ import annotations

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import REPO, run_json, run_xlalint

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

FIXTURES = REPO / "fixtures"


@pytest.fixture(scope="module")
def fixtures_report() -> tuple[dict, int]:
    return run_json(
        "fixtures/multi_blocker.py", "fixtures/keras_functional.py", "fixtures/clean_and_untraceable.py",
        "examples/train.py", "fixtures/clean_and_untraceable.py::plain_helper",
        "--spec", "float32[4,6]", "--spec", "int32[]", "--device", "cpu",
    )


def _lines(report: dict, path: str, code: str) -> set[tuple[str, int]]:
    return {(f["code"], f["line"]) for f in report["findings"] if f["path"] == path and f["code"] == code}


def test_all_blockers_of_one_function_reported_each_at_its_line(fixtures_report):
    report, code = fixtures_report
    assert code == 1
    path = FIXTURES / "multi_blocker.py"
    assert _lines(report, "fixtures/multi_blocker.py", "XLA001") == gt.expected(path)
    fn = gt.load_module(path).preprocess_and_score
    message = gt.compile_error(fn)
    assert message is not None and "unsupported operations" in message  # the compiler stops at one


def test_unsupported_op_in_keras_functional_model_is_at_the_layer_line(fixtures_report):
    report, _ = fixtures_report
    findings = [f for f in report["findings"] if f["path"] == "fixtures/keras_functional.py"
                and f["code"] == "XLA001"]
    assert {("XLA001", f["line"]) for f in findings} == gt.expected(FIXTURES / "keras_functional.py")
    assert "mix_up" in findings[0]["message"]
    model = gt.load_module(FIXTURES / "keras_functional.py").model
    assert gt.keras_keeps_xla(model)  # Keras itself would compile it with XLA
    jitted = tf.function(lambda images: model(images), jit_compile=True)
    with pytest.raises(Exception, match="StatelessRandomGamma"):
        jitted.experimental_get_compiler_ir(tf.ones([1, 8, 8, 3]))(stage="hlo")


def test_entry_verdicts_agree_with_the_compiler(fixtures_report):
    report, _ = fixtures_report
    verdicts = {(e["path"], e["name"]): e["verdict"] for e in report["entries"]}
    for path in ("examples/train.py", "fixtures/clean_and_untraceable.py"):
        module = gt.load_module(REPO / path)
        for name, fn in gt.entries(module).items():
            expected = "compatible" if gt.compile_error(fn) is None else "incompatible"
            assert verdicts[(path, name)] == expected, name


def test_untraceable_entry_says_what_to_add_and_main_block_never_runs(fixtures_report):
    report, _ = fixtures_report
    entry = next(e for e in report["entries"] if e["name"] == "no_signature")
    assert entry["verdict"] == "unknown"
    assert "input_signature" in entry["error"] and "--spec" in entry["error"]  # its __main__ block never calls it
    assert ("fixtures/clean_and_untraceable.py", "normalize") in {
        (e["path"], e["name"]) for e in report["entries"] if e["verdict"] == "compatible"}


def test_named_function_with_specs_is_traced(fixtures_report):
    report, _ = fixtures_report
    found = [f for f in report["findings"] if f["entry"] == "plain_helper"]
    assert [(f["code"], f["line"]) for f in found] == [("XLA102", 17)]
    assert "argument `k`" in found[0]["message"]


# Fields may be added (docs/json-schema.md), never renamed or removed: the first set of each pair is
# what the schema has always had, the second what was added since.
TOP = ({"xlalint", "tensorflow", "device", "entries", "findings", "errors"},
       {"interrupted", "coverage", "baseline", "tables"})
ENTRY = ({"path", "name", "line", "verdict", "error", "verify", "autocluster"},
         {"jit_compile", "ops", "xla_off", "keras_refuses_jit", "cell", "xla_mode", "xla_mode_source",
          "xla_mode_note", "variable_devices"})
FINDING = ({"code", "name", "severity", "message", "hint", "path", "line", "col", "entry", "op_type", "op_name",
            "fix"}, {"entries", "fingerprint", "related", "cell"})


def test_json_schema_is_stable(fixtures_report):
    report, _ = fixtures_report
    assert set(report) == TOP[0] | TOP[1]
    assert report["device"] == "cpu" and report["tensorflow"].startswith("2.")
    for entry in report["entries"]:
        assert set(entry) == ENTRY[0] | ENTRY[1]
        assert entry["verdict"] in {"compatible", "incompatible", "runs", "unknown"}
        blocked = any(f["severity"] == "error" for f in report["findings"]
                      if f["entry"] == entry["name"] and f["path"] == entry["path"])
        assert (entry["verdict"] == "incompatible") == blocked or entry["verdict"] == "unknown"
    for finding in report["findings"]:
        assert set(finding) == FINDING[0] | FINDING[1]
        assert finding["severity"] in {"error", "warning", "info"}
        assert finding["line"] >= 1 and finding["col"] >= 1


def test_text_output_lists_findings_and_summary():
    done = run_xlalint("fixtures/multi_blocker.py", "--device", "cpu")
    assert done.returncode == 1
    assert "fixtures/multi_blocker.py:10:13: XLA001" in done.stdout
    assert "1 entries checked for XLA on cpu: 0 compatible, 1 incompatible" in done.stdout


def test_clean_file_exits_zero():
    done = run_xlalint("rules/XLA001/good.py", "--device", "cpu")
    assert done.returncode == 0, done.stdout
    assert "ready for jit_compile=True" in done.stdout


def test_parallel_workers_give_the_same_report():
    files = ["fixtures/multi_blocker.py", "rules/XLA001/bad.py", "rules/XLA001/good.py", "fixtures/keras_functional.py"]
    serial, _ = run_json(*files, "--device", "cpu", "--no-cache")
    parallel, _ = run_json(*files, "--device", "cpu", "--no-cache", "--jobs", "2")
    assert parallel["findings"] == serial["findings"] and parallel["entries"] == serial["entries"]


def test_autocluster_mode_reports_clusters_and_splitters_at_user_lines():
    report, _ = run_json("fixtures/autocluster/split_by_numpy_function.py", "--mode", "autocluster",
                         "--device", "cpu")
    entry = {e["name"]: e for e in report["entries"]}["split_by_numpy_function"]
    clusters = entry["autocluster"]
    assert len(clusters["clusters"]) == 2 and 0 < clusters["compiled_ops"] < clusters["total_ops"]
    (splitter,) = clusters["splitters"]
    assert splitter["op_type"] == "PyFunc" and splitter["line"] == 15
    assert (entry["xla_mode"], entry["xla_mode_source"], entry["verdict"]) == (
        "auto-clustering", "--mode autocluster", "runs")
    plain, _ = run_json("fixtures/autocluster/split_by_numpy_function.py", "--device", "cpu")
    assert all(e["autocluster"] is None and e["xla_mode"] == "as-if-jit_compile" for e in plain["entries"])
