"""The differential tester (bench/difftest.py) finds a disagreement planted in xlalint and minimises it
(judging the run again without the plant finds none), and on a fixed seed xlalint agrees with the
real compiler on every generated program's verdict."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import REPO

sys.path.insert(0, str(REPO / "bench"))
import difftest  # noqa: E402 - bench/difftest.py

pytestmark = pytest.mark.tf  # it runs xlalint's full mode and the compiler

# A rule that is wrong on purpose: every Abs is an XLA error. Registered before xlalint runs, in the
# xlalint process that the tester starts, through a sitecustomize on PYTHONPATH; its code is added to
# the codes read from the rule modules' names (xlalint.rule_codes), which --select defaults to.
PLANTED = '''
import sys
sys.path.insert(0, {repo!r})
import xlalint.rule_codes as codes
_known = codes.rule_codes
codes.rule_codes = lambda: (*_known(), "XLA099")
from xlalint.checks import RULES, Hit, Rule

def _check(graph, ctx):
    for node in graph.nodes():
        if node["type"] == "Abs":
            yield Hit("XLA099", "planted: Abs is unsupported", "none", node=node["id"])

RULES["XLA099"] = Rule("XLA099", "planted-wrong-rule", "error", "wrong on purpose", check=_check)
'''


def test_a_planted_wrong_rule_is_found_and_minimised(tmp_path: Path):
    plant = tmp_path / "plant"
    plant.mkdir()
    (plant / "sitecustomize.py").write_text(PLANTED.format(repo=str(REPO)), encoding="utf-8")
    ops = ("abs", "square", "negative")
    drawn = [difftest.draw(5, i, ops) for i in range(2)]
    assert any(len(p.steps) > 1 and "abs" in [s.op for s in p.steps] for p in drawn)  # something to shrink

    result = difftest.run(5, 2, tmp_path / "out", jobs=2, ops=ops, env={"PYTHONPATH": str(plant)})

    planted = [r for r in result["rows"] if r["category"] == "false blocker: XLA099 Abs"]
    assert planted and all("abs" in r["steps"] for r in planted)
    assert all(r["outcome"] == "compiles" for r in planted)  # the real compiler disagrees with the rule
    assert not [r for r in result["rows"] if r["category"] and "XLA099" not in r["category"]]
    case = Path(result["minimised"]["false blocker: XLA099 Abs"]).read_text(encoding="utf-8")
    assert "plain wrapper; steps: abs(x0)." in case  # one step left, no wrapper
    assert case.count("tf.abs(") == 1 and "tf.square(" not in case and "tf.negative(" not in case
    assert "Expected: compiles" in case

    again = difftest.recheck(tmp_path / "out")  # the saved graphs judged by this process's rules: none planted
    assert [r["name"] for r in again["rows"]] == [r["name"] for r in result["rows"]]
    assert not [r for r in again["rows"] if r["category"]]
    assert {r["verdict"] for r in again["rows"] if r["name"] in {p["name"] for p in planted}} == {"compatible"}


def test_xlalint_agrees_with_the_compiler_on_a_fixed_seed(tmp_path: Path):
    """CI's small budget of the long run documented in docs/agreement.md."""
    result = difftest.run(0, 12, tmp_path, jobs=2, minimise_max=0)
    valid = [r for r in result["rows"] if r["outcome"] != "invalid"]
    assert len(valid) >= 8
    assert {r["outcome"] for r in valid} >= {"compiles", "fails"}  # both answers are asked
    verdict = [r for r in valid if r["category"] and r["category"].split(":")[0] in difftest.VERDICT_KINDS]
    assert not verdict, verdict


def test_the_new_families_agree_with_the_compiler_on_verdict_and_line(tmp_path: Path):
    """Two programs of each family beyond the core table: tensor lists, nested loops, random, complex, strings."""
    families = tuple(f for f, kind in difftest.FAMILIES.items() if f != "core" and not kind.script)
    result = difftest.run(0, 2, tmp_path, jobs=2, minimise_max=0, families=families)
    valid = [r for r in result["rows"] if r["outcome"] != "invalid"]
    assert {r["family"] for r in valid} == set(families)
    assert not [r for r in valid if r["category"]], [(r["name"], r["category"]) for r in valid if r["category"]]
    assert any(r["line"] for r in valid)  # a failing program whose line the compiler names, and xlalint too


def test_the_script_families_agree_with_the_compiler_in_both_modes(tmp_path: Path):
    """Two scripts of each script family of seed 6, run for real (with XLA, and without it where that fails):
    a MirroredStrategy over two virtual CPUs whose Keras model is compiled with jit_compile=True at module level
    (XLA refuses it: both modes say XLA305), tf.function wrappers of objects made at module level and in main(),
    a failing script only ``xlalint run`` sees, preprocessing models that Keras keeps off XLA or compiles."""
    families = tuple(f for f, kind in difftest.FAMILIES.items() if kind.script)
    result = difftest.run(6, 2, tmp_path, jobs=2, minimise_max=0, families=families)
    valid = [r for r in result["rows"] if r["outcome"] != "invalid"]
    assert {r["family"] for r in valid} == set(families)
    assert not [r for r in valid if r["category"] or r["check"]["category"]], [
        (r["name"], r["category"], r["check"]) for r in valid if r["category"] or r["check"]["category"]]
    strategy = [r for r in valid if "strategy=mirrored2:kind=keras:jit=true" in r["wrapper"]]
    verdicts = {r["check"]["verdict"] for r in strategy}
    assert strategy and verdicts == {"incompatible"} == {r["verdict"] for r in strategy}
    assert any(r["outcome"] == "fails" and not r["visible"] and r["verdict"] == "incompatible" for r in valid)

