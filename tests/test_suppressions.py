"""`# xlalint: ignore[...]` comments: line, function and file level; stale ones reported."""

from __future__ import annotations

import re

import pytest

from helpers import REPO, run_json
from xlalint.source.suppressions import parse

FIXTURE = REPO / "fixtures/suppressed/suppressed.py"


def test_parse_kinds_and_ranges():
    source = FIXTURE.read_text()
    items = {s.line: s for s in parse(source).items}
    assert items[9].codes == ("XLA001",) and (items[9].first, items[9].last) == (9, 9)
    assert items[13].codes == ("XLA1",) and (items[13].first, items[13].last) == (13, 15)
    whole = parse("# xlalint: ignore-file\nimport tensorflow as tf\n").items[0]
    assert whole.codes == ("",) and whole.covers(10**6, "XLA104")


@pytest.mark.tf
def test_suppressed_findings_vanish_and_stale_comment_is_reported(tmp_path):
    report, _ = run_json(str(FIXTURE), "--device", "cpu")
    got = sorted((f["code"], f["line"]) for f in report["findings"])
    assert got == [("XLA001", 20), ("XLA403", 14), ("XLA801", 10)]  # a suppressed blocker still blocks XLA403
    verdicts = {e["name"]: e["verdict"] for e in report["entries"]}
    assert verdicts == {"line_level": "compatible", "function_level": "compatible", "not_suppressed": "incompatible"}
    # Without the comments the same file has the findings they hid.
    bare = tmp_path / "bare.py"
    bare.write_text(re.sub(r"  # xlalint: ignore\[[A-Z0-9]+\]", "", FIXTURE.read_text()))
    report, _ = run_json(str(bare), "--device", "cpu")
    assert sorted((f["code"], f["line"]) for f in report["findings"]) == [
        ("XLA001", 9), ("XLA001", 20), ("XLA102", 15), ("XLA403", 14)]


@pytest.mark.tf
def test_unused_check_respects_the_selected_codes():
    report, _ = run_json(str(FIXTURE), "--device", "cpu", "--select", "XLA0,XLA8")
    assert ("XLA801", 10) not in {(f["code"], f["line"]) for f in report["findings"]}
