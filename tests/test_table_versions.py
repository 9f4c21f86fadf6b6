"""Which shipped table serves a TensorFlow version, and how a report names it (no TensorFlow)."""

from __future__ import annotations

import json

import pytest

from xlalint.core import tables
from xlalint.report import EMITTERS
from xlalint.core.results import Entry, Report


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A data folder with API tables for 2.16.2, 2.17.1 and 2.21.0 and constant inputs for 2.21.0 only."""
    for name in ("static_api_tf2.16.2", "static_api_tf2.17.1", "static_api_tf2.21.0", "const_inputs_tf2.21.0"):
        (tmp_path / f"{name}.json").write_text("{}")
    monkeypatch.setattr(tables, "DATA", tmp_path)


@pytest.mark.parametrize("installed, served", [
    ("2.17.1", "2.17.1"), ("2.17.0", "2.17.1"),  # the same minor release before an older one
    ("2.19.0", "2.17.1"), ("2.25.0", "2.21.0"),  # else the newest older one
    ("2.12.0", "2.16.2"),  # else the oldest
    (None, "2.21.0"), ("2.22.0rc1", "2.21.0"),
])
def test_closest_shipped_version(shipped, installed, served):
    assert tables.closest(tables.API, installed) == served


def test_versions_sort_as_numbers(shipped):
    assert tables.shipped_versions(tables.API) == ["2.16.2", "2.17.1", "2.21.0"]


def test_report_names_each_table_and_how_it_was_found(shipped):
    used = tables.used("2.17.1", ("2.17.1", "generated"))
    assert used == {"support": {"tensorflow": "2.17.1", "source": "generated"},
                    "const_inputs": {"tensorflow": "2.21.0", "source": "closest"},
                    "api": {"tensorflow": "2.17.1", "source": "shipped"}}
    assert tables.used("2.17.1") == {"api": {"tensorflow": "2.17.1", "source": "shipped"}}  # --static
    report = Report(device="cpu", tensorflow="2.17.1", entries=[Entry("m.py", "f", 1, "compatible")], tables=used)
    assert json.loads(EMITTERS["json"](report))["tables"] == used
    assert EMITTERS["text"](report).splitlines()[-1] == (
        "tables: support generated for TensorFlow 2.17.1, const_inputs closest for TensorFlow 2.21.0, "
        "api shipped for TensorFlow 2.17.1")
    every = {kind: {"tensorflow": "2.21.0", "source": "shipped"} for kind in ("support", "const_inputs", "api")}
    assert tables.describe(every) == "tables: shipped for TensorFlow 2.21.0"


def test_every_shipped_version_has_all_three_tables():
    versions = [tables.shipped_versions(prefix) for prefix in (tables.SUPPORT, tables.CONST_INPUTS, tables.API)]
    assert versions[0] == versions[1] == versions[2] and "2.21.0" in versions[0]


@pytest.mark.parametrize("installed, outside", [("2.16.0", False), ("2.19.1", False), ("2.21.4", False),
                                                ("2.15.1", True), ("2.22.0rc1", True), (None, False)])
def test_a_release_outside_the_shipped_ones_is_said_once_and_quiet_keeps_it_silent(installed, outside, capsys):
    from xlalint.cli.common import say_if_outside_range

    say_if_outside_range(installed, quiet=False)
    said = capsys.readouterr().err
    assert bool(said) is outside and said.count("\n") == int(outside)
    if outside:
        assert f"TensorFlow {installed} is outside the releases xlalint was checked on" in said
        assert "docs/versions.md" in said
    say_if_outside_range(installed, quiet=True)
    assert capsys.readouterr().err == ""
