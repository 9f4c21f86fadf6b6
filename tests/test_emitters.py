"""Each output format on a hand-made report, against golden files (no TensorFlow)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from xlalint.report import EMITTERS
from xlalint.report.sarif import source_root
from xlalint.core.results import Entry, FileError, Finding, Related, Report, one_per_place

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"


def _report() -> Report:
    return Report(
        device="gpu", tensorflow="2.21.0",
        entries=[Entry("src/train.py", "train_step", 12, "incompatible", ops=12, jit_compile=True),
                 Entry("src/train.py", "predict", 30, "compatible", ops=5),
                 Entry("src/train.py", "loose", 40, "unknown", "tf.function `loose` has no input_signature")],
        findings=[
            Finding("XLA001", "unsupported-op", "error", "`tf.print` (PrintV2) has no XLA kernel on gpu",
                    "Printing needs the host.", "src/train.py", 14, 5, "train_step", "PrintV2", "PrintV2",
                    fingerprint="0f1e2d3c4b5a69788796a5b4c3d2e1f0:1"),
            Finding("XLA102", "value-specialized-input", "warning",
                    "input `shape` of `Reshape` depends on the value of argument `n`, 100% of the time",
                    "Derive it from static shapes.", "src/train.py", 16, 9, "train_step", "Reshape", "Reshape",
                    entries=("train_step", "predict"),
                    related=(Related("src/train.py", 15, "`n` is not a constant: it comes from this loop"),)),
        ],
        errors=[FileError("src/broken.py", "syntax error at line 3: invalid syntax")],
        tables={kind: {"tensorflow": "2.21.0", "source": "shipped"} for kind in ("support", "const_inputs", "api")},
    )


@pytest.mark.parametrize("fmt", sorted(EMITTERS))
def test_emitter_matches_golden_file(fmt):
    text = EMITTERS[fmt](_report()).replace(__import__("xlalint").__version__, "VERSION")
    text = text.replace(source_root().as_uri(), "file:///ROOT")  # SARIF names the checkout it ran in
    golden = GOLDEN / f"report.{fmt}"
    if os.environ.get("XLALINT_UPDATE_GOLDEN"):
        golden.write_text(text + "\n")
    assert text + "\n" == golden.read_text()


def test_sarif_is_valid_and_lists_used_rules():
    sarif = json.loads(EMITTERS["sarif"](_report()))
    schema = json.loads((HERE / "data/sarif-2.1.0-subset.schema.json").read_text())
    jsonschema.validate(sarif, schema)
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["XLA001", "XLA102"]
    assert [r["level"] for r in run["results"]] == ["error", "warning"]
    assert all(r["ruleIndex"] == [d["id"] for d in run["tool"]["driver"]["rules"]].index(r["ruleId"])
               for r in run["results"])
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


@pytest.mark.parametrize("errors, interrupted, notes", [
    ([], None, []),
    ([FileError("src/broken.py", "syntax error at line 3: invalid syntax")], None,
     ["syntax error at line 3: invalid syntax"]),
    ([], "SIGTERM", ["the run was cut short by SIGTERM: the results are incomplete"]),
])
def test_sarif_reports_success_only_when_every_file_was_checked(errors, interrupted, notes):
    report = _report()
    report.errors, report.interrupted = errors, interrupted
    [invocation] = json.loads(EMITTERS["sarif"](report))["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is (not notes)
    assert [n["message"]["text"] for n in invocation["toolExecutionNotifications"]] == notes


def test_github_commands_escape_and_map_severities():
    lines = EMITTERS["github"](_report()).splitlines()
    assert lines[0].startswith("::error file=src/train.py,line=14,col=5,title=XLA001 unsupported-op::")
    assert lines[1].startswith("::warning ") and "100%25 of the time" in lines[1]


def test_text_color_only_when_asked():
    assert "\033[" not in EMITTERS["text"](_report())
    assert "\033[31mXLA001 [error]\033[0m" in EMITTERS["text"](_report(), color=True)


def test_one_finding_per_place_names_every_entry_that_reaches_it():
    def at(entry, line, message="`StringSplit` has no XLA kernel on gpu", related=()):
        return Finding("XLA001", "unsupported-op", "error", message, "h", "src/m.py", line, 5, entry,
                       "StringSplitV2", "split", related=related)
    built = Related("src/m.py", 3, "the layer `tv` is constructed here")
    merged = one_per_place([at("model", 9, related=(built,)), at("build_model", 9, related=(built,)),
                            at("train_step", 9), at("model", 11), at("model", 9, "other message")])
    assert [(f.line, f.message[:5], f.all_entries, f.related) for f in merged] == [
        (9, "`Stri", ("model", "build_model", "train_step"), (built,)),
        (11, "`Stri", ("model",), ()),
        (9, "other", ("model",), ()),
    ]
    assert merged[0].to_json()["entry"] == "model"
    assert merged[0].to_json()["entries"] == ["model", "build_model", "train_step"]
