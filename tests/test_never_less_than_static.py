"""The full mode reports every error ``--static`` reports, on every example and fixture script: at the
same place, or as a traced error of the same entry (e.g. a string argument, which the trace places
at the ``def`` line and the static pass at the signature).

Where no trace reached (an entry without specs, a function inside ``main()``, a file that fails to
import), the static finding itself is kept, marked static.
"""

from __future__ import annotations

import pytest

from helpers import REPO, run_json
from xlalint.engine.analysis import static_report
from xlalint.settings.table import Options

pytestmark = pytest.mark.tf  # the full mode traces with TensorFlow

SCRIPTS = sorted(str(p.relative_to(REPO)) for p in (REPO / "fixtures").glob("*.py"))


def _missing(static: list[dict], full: list[dict]) -> list[dict]:
    """Static errors with no full-mode error at their place nor in their entry."""
    errors = [f for f in full if f["severity"] == "error"]
    places = {(f["path"], f["line"]) for f in errors}
    entries = {(f["path"], name) for f in errors for name in f["entries"]}
    return [f for f in static if (f["path"], f["line"]) not in places
            and not any((f["path"], name) in entries for name in f["entries"])]


def _static_errors(paths: list[str]) -> list[dict]:
    return [f.to_json() for f in static_report(paths, Options(device="cpu")).findings if f.severity == "error"]


@pytest.fixture(scope="module")
def scripts_report() -> dict:
    return run_json(*SCRIPTS, "--device", "cpu")[0]


def test_full_mode_keeps_every_static_error_in_rule_examples(rules_report, monkeypatch):
    monkeypatch.chdir(REPO)  # paths as the full run shows them
    static = _static_errors(["rules"])
    assert static and _missing(static, rules_report["findings"]) == []


def test_full_mode_keeps_every_static_error_in_fixture_scripts(scripts_report, monkeypatch):
    monkeypatch.chdir(REPO)
    static = _static_errors(SCRIPTS)
    assert static and _missing(static, scripts_report["findings"]) == []
