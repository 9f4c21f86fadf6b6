"""Findings are selected once, at the end of a run: codes, per-file ignores, comments, then verdicts and run rules."""

from __future__ import annotations

from xlalint.checks import RULES
from xlalint.core.results import Entry, Finding, Report
from xlalint.engine.selection import PENDING, Produced, select
from xlalint.settings.table import Options
from xlalint.source.suppressions import SuppressionIndex

SOURCE = ("def f():  # xlalint: ignore[XLA1]\n"
          "    x = 1  # xlalint: ignore[XLA001]\n"
          "    y = 2\n"
          "z = 3  # xlalint: ignore[XLA2]\n")


def _run(tmp_path, select_codes, ignores=None):
    src = tmp_path / "m.py"
    src.write_text(SOURCE)
    helper = tmp_path / "helper.py"
    helper.write_text("w = 4\n")

    def at(path, code, line):
        return Finding(code, RULES[code].name, RULES[code].severity, "m", "h", str(path), line, 1, "f")

    report = Report("cpu", entries=[Entry(str(src), "f", 1, PENDING), Entry(str(src), "g", 3, PENDING)])
    produced = [Produced(at(src, "XLA001", 2), (0,)),  # suppressed on its line
                Produced(at(src, "XLA002", 3), (1,)),
                Produced(at(helper, "XLA101", 1), (0,), (str(src), 1)),  # in a helper: its entry's line covers it
                Produced(at(src, "XLA104", 4))]
    options = Options(device="cpu", select=select_codes, root=str(tmp_path), per_file_ignores=ignores or {})
    found = select(report, produced, options, SuppressionIndex(), [str(src)])
    return [(f.code, f.line) for f in found], {e.name: e.verdict for e in report.entries}


def test_comments_selection_and_verdicts_apply_once(tmp_path):
    found, verdicts = _run(tmp_path, tuple(RULES))
    assert found == [("XLA002", 3), ("XLA104", 4), ("XLA801", 4)]
    assert verdicts == {"f": "compatible", "g": "incompatible"}  # f's blockers are suppressed


def test_an_unselected_blocker_leaves_its_entry_compatible_and_the_comment_unjudged(tmp_path):
    found, verdicts = _run(tmp_path, tuple(c for c in RULES if c != "XLA002" and not c.startswith("XLA2")))
    assert found == [("XLA104", 4)]  # XLA2 is not checked: its comment is not reported as unused
    assert verdicts == {"f": "compatible", "g": "compatible"}


def test_per_file_ignores(tmp_path):
    found, verdicts = _run(tmp_path, tuple(RULES), {"m.py": ["XLA0"]})
    assert found == [("XLA104", 4), ("XLA801", 2), ("XLA801", 4)]  # an ignored finding meets no comment
    assert verdicts["g"] == "compatible"
