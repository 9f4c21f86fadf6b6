"""What cannot be traced from the file alone is a notice, not a failure, unless ``--strict`` (or
``strict = true``) asks for full coverage."""

from __future__ import annotations

import pytest

from helpers import REPO, run_json, run_xlalint

pytestmark = pytest.mark.tf  # the full mode traces with TensorFlow
UNTRACEABLE = "fixtures/advanced_quickstart.py"  # no entry xlalint can trace, a blocker the static pass finds
NO_ENTRY = "fixtures/broken/no_entries.py"  # TensorFlow, no entry point


def test_untraceable_code_is_listed_and_fails_only_when_strict(tmp_path):
    report, code = run_json(NO_ENTRY, "--device", "cpu")
    assert [(e["path"], e["notice"]) for e in report["errors"]] == [(NO_ENTRY, True)] and code == 0
    assert run_xlalint(NO_ENTRY, "--device", "cpu", "--strict").returncode == 1
    (tmp_path / "pyproject.toml").write_text("[tool.xlalint]\nstrict = true\n")
    done = run_xlalint(str(REPO / NO_ENTRY), "--device", "cpu", "--config", str(tmp_path / "pyproject.toml"))
    assert done.returncode == 1 and "notice: no entry point found" in done.stdout


def test_an_entry_without_specs_keeps_the_static_errors_inside_it():
    report, code = run_json(UNTRACEABLE, "--device", "cpu")
    static, _ = run_json(UNTRACEABLE, "--device", "cpu", "--static")
    assert {e["verdict"] for e in report["entries"]} == {"unknown"}
    errors = [(f["code"], f["line"]) for f in report["findings"] if f["severity"] == "error"]
    assert errors == [(f["code"], f["line"]) for f in static["findings"]] == [("XLA001", 29), ("XLA001", 36)]
    assert all("--spec" in f["hint"] and "(static:" in f["message"] for f in report["findings"])
    assert code == 1  # an error finding fails the run, traced or not
