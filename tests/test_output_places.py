"""Issue 13's output: --verify takes back the XLA403 offer, the tf.strings.format hint, related locations
of Keras layers (hand-built graphs, no TensorFlow) and of shape values (traced, asked of the compiler)."""

from __future__ import annotations

import pytest

from graph_builder import SUPPORT, GraphBuilder
from xlalint.engine.entries import CheckedFile, entry_findings
from xlalint.engine.keras_decision import entry_facts
from xlalint.core.results import Related, Report
from xlalint.engine.selection import Produced, select
from xlalint.settings.table import Options

VERIFIED = {"device": "cpu", "compiled": True, "error": None, "error_op": None, "allclose": True,
            "max_abs_diff": 0.0, "compile_s": 0.1, "xla_step_s": 0.001, "tf_step_s": 0.001, "speedup": 1.0,
            "compilations": 1, "xla_peak_bytes": None, "tf_peak_bytes": None, "memory_method": None,
            "training_step": False}


def _findings(b: GraphBuilder, verify=None, device="cpu"):
    raw = {"name": "f", "line": 1, "kind": "tf.function", "jit_compile": None, "signature": [],
           "graph": b.build().data, **({"verify": verify} if verify else {})}
    return _entry_findings(raw, Options(device=device))


def _entry_findings(raw, options: Options):
    path = "/src/model.py"
    return entry_findings(raw, CheckedFile.at(path), SUPPORT, options, entry_facts(raw, path, options))


def _plain() -> GraphBuilder:
    b = GraphBuilder()
    b.op("exp", "Exp", [b.arg("x", shape=[4])], shape=[4])
    return b


@pytest.mark.parametrize("verify, codes", [
    (None, ["XLA403"]),
    (VERIFIED, ["XLA403"]),
    ({**VERIFIED, "allclose": False, "max_abs_diff": 1.0}, []),
    ({**VERIFIED, "compiled": False, "error": "boom", "error_op": "Exp", "allclose": None}, ["XLA901"]),
])
def test_a_verify_failure_takes_back_the_offer_of_jit_compile(verify, codes):
    assert [f.code for f in _findings(_plain(), verify)] == codes


def test_a_string_format_of_its_own_is_hinted_as_tf_strings_format():
    b = GraphBuilder()
    b.op("format", "StringFormat", [b.arg("x", shape=[4])], dtype="string", attrs={"T": ["float32"]})
    [finding] = _findings(b)
    assert (finding.code, finding.hint) == ("XLA001", "XLA has no string type: build the string with "
                                            "tf.strings.format outside the compiled function, from values it returns.")


def test_an_op_of_a_users_layer_names_where_the_layer_was_constructed():
    b = GraphBuilder()
    b.op("fn", "PyFunc", [b.arg("x", shape=[4])], line=20, attrs={"Tin": ["float32"], "Tout": ["float32"]})
    b.nodes[-1]["layer"] = {"name": "callback", "class": "Callback", "file": "/src/model.py", "line": 7,
                            "user_code": True, "gpu_kernel": None}
    [finding] = _findings(b)
    assert (finding.code, finding.line, finding.related) == ("XLA001", 20, (
        Related("/src/model.py", 7, "the Keras layer `callback` (Callback) is constructed here"),))


@pytest.mark.tf
def test_a_shape_that_can_never_be_constant_names_where_its_value_comes_from():
    """The related place is the op the value comes from; the compiler fails on exactly these two."""
    import groundtruth as gt
    from helpers import REPO, run_json

    path = REPO / "fixtures/related/value_origins.py"
    report, code = run_json(str(path.relative_to(REPO)), "--device", "cpu", "--no-cache")
    assert [(f["code"], f["line"], [(r["line"], r["message"]) for r in f["related"]]) for f in report["findings"]] == [
        ("XLA101", 9, [(7, "the value comes from the result of the while loop")]),
        ("XLA101", 15, [(14, "the value comes from the random op RandomUniformInt")])]
    assert code == 1
    module = gt.load_module(path)
    assert all("must be a compile-time constant" in gt.compile_error(fn) for fn in gt.entries(module).values())


def test_the_offer_of_jit_compile_does_not_depend_on_which_codes_are_shown():
    """An entry with a blocker is never offered jit_compile=True, even when --select hides the blocker."""
    b = GraphBuilder()
    b.op("callback", "PyFunc", [b.arg("x", shape=[4])], shape=[4])
    everything = _findings(b)
    assert [f.code for f in everything] == ["XLA001"]
    raw = {"name": "f", "line": 1, "kind": "tf.function", "jit_compile": None, "signature": [], "graph": b.build().data}
    options = Options(device="cpu", select=("XLA403",))
    produced = [Produced(f) for f in _entry_findings(raw, options)]
    assert select(Report("cpu"), produced, options, None) == []
