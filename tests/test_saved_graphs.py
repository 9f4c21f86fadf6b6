"""Rules rerun on saved op graphs, without TensorFlow, give the same answers as the live runs.

The graphs in fixtures/graphs are written by ``python tools/regen.py`` (rerun it after changing
the graph format or the examples).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest

import marks
from helpers import REPO
from xlalint.engine.entries import findings_for_traced_entry
from xlalint.settings.table import Options
from xlalint.checks import RULES

GRAPHS = sorted((REPO / "fixtures/graphs").glob("*.json"))
# Rule examples whose findings come from the graph (XLA107 is found in the calling source: no graph).
GRAPH_EXAMPLES = sorted(str(p.relative_to(REPO)) for p in (REPO / "rules").glob("*/*.py")
                        if RULES[p.parent.name].check)


def _findings_by_file() -> dict[str, set[tuple[str, int]]]:
    found = defaultdict(set)
    for path in GRAPHS:
        saved = json.loads(path.read_text())
        for f in findings_for_traced_entry(saved, saved["path"], saved["tensorflow"], Options(device="cpu")):
            found[saved["path"]].add((f.code, f.line, f.severity))
    return found


@pytest.fixture(scope="module")
def found():
    previous = os.getcwd()
    os.chdir(REPO)  # saved source paths are relative to the repository
    try:
        yield _findings_by_file()
    finally:
        os.chdir(previous)


def test_every_example_has_saved_graphs():
    sources = {json.loads(p.read_text())["path"] for p in GRAPHS}
    missing = sorted(set(GRAPH_EXAMPLES) - sources)
    assert not missing, f"no saved graph of {', '.join(missing)}: run python tools/regen.py"


@pytest.mark.parametrize("source", GRAPH_EXAMPLES)
def test_rule_examples_on_saved_graphs(found, source):
    code = source.split("/")[1]
    result = found[source]
    if source.endswith("bad.py"):
        assert {(c, line) for c, line, _ in result if c == code} == {
            m for m in marks.expected(REPO / source) if m[0] == code}
    else:
        assert not [f for f in result if f[0] == code or f[2] == "error"]


@pytest.mark.parametrize("source", ["fixtures/multi_blocker.py", "fixtures/keras_functional.py"])
def test_fixture_blockers_on_saved_graphs(found, source):
    assert {(c, line) for c, line, _ in found[source] if c == "XLA001"} == marks.expected(REPO / source)


def test_saved_graph_analysis_never_imports_tensorflow():
    code = (f"import os, sys, json; os.chdir({str(REPO)!r}); "
            "from xlalint.engine.entries import findings_for_traced_entry; from xlalint.settings.table import Options; "
            f"saved = json.load(open({str(GRAPHS[0])!r})); "
            "findings_for_traced_entry(saved, saved['path'], saved['tensorflow'], Options()); "
            "assert 'tensorflow' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_where_made_by_boolean_mask_is_named_and_placed_as_the_mask(monkeypatch):
    """tf.boolean_mask and tf.where both lower to Where: the op's name scope tells which one the line
    calls, for the message and for the column (the mask's call, not the first call on the line)."""
    monkeypatch.chdir(REPO)
    lines = (REPO / "rules/XLA103/bad.py").read_text().splitlines()
    found = {}
    for entry, api in (("masked_mean_loss", "tf.boolean_mask"), ("positive_scores", "tf.where")):
        saved = json.loads((REPO / f"fixtures/graphs/rules__XLA103__bad.{entry}.json").read_text())
        [finding] = [f for f in findings_for_traced_entry(saved, saved["path"], saved["tensorflow"],
                                                          Options(device="cpu")) if f.code == "XLA103"]
        found[entry] = (finding.message.split(" has ")[0], finding.col)
        assert finding.col == lines[finding.line - 1].index(api) + 1, (entry, finding)
    assert found == {"masked_mean_loss": ("`tf.boolean_mask` (Where)", 27), "positive_scores": ("`tf.where` (Where)", 15)}
