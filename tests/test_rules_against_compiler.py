"""Every rule example in rules/ is checked by xlalint AND by the real XLA compiler.

bad.py: xlalint reports the rule's code exactly at the ``# expect:`` lines, and
the compiler agrees: error rules fail to compile, warning rules show the
specialization they warn about, XLA2xx rules compile and run but return
another result than TensorFlow without XLA (XLA301: Keras itself turns XLA off
for the model). good.py: compiles, runs to TensorFlow's result, and gets no
finding of that code and no error at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import groundtruth as gt
from conftest import REPO
from xlalint.checks import RULES

RULE_DIRS = sorted(p for p in (REPO / "rules").iterdir() if p.is_dir() and p.name in RULES)
SOURCE_RULES = {"XLA107"}  # found by the libcst pass in the calling code, asked of TensorFlow by running it


def _found(report: dict, path: Path, code: str | None = None) -> set[tuple[str, int]]:
    rel = str(path.relative_to(REPO))
    return {(f["code"], f["line"]) for f in report["findings"]
            if f["path"] == rel and (code is None or f["code"] == code)}


def test_every_rule_has_examples_and_docs():
    # Other codes without a graph check come from the run itself (suppressions, --verify): docs/ has them.
    assert {p.name for p in RULE_DIRS} == {code for code, rule in RULES.items() if rule.check} | SOURCE_RULES
    docs = "".join(p.read_text() for p in (REPO / "docs").glob("*.md"))
    assert all(code in docs for code, rule in RULES.items() if not rule.check)
    for rule_dir in RULE_DIRS:
        for name in ("README.md", "bad.py", "good.py"):
            assert (rule_dir / name).is_file(), f"{rule_dir.name}/{name} is missing"


@pytest.mark.parametrize("rule_dir", RULE_DIRS, ids=lambda p: p.name)
def test_bad_example_is_reported_at_marked_lines(rule_dir, rules_report):
    code = rule_dir.name
    bad = rule_dir / "bad.py"
    marks = {m for m in gt.expected(bad) if m[0] == code}
    assert marks, f"{bad} marks no line with '# expect: {code}'"
    assert _found(rules_report, bad, code) == marks
    assert not [e for e in rules_report["errors"] if e["path"].startswith(str(rule_dir.relative_to(REPO)))]


@pytest.mark.parametrize("rule_dir", RULE_DIRS, ids=lambda p: p.name)
def test_compiler_agrees_with_bad_example(rule_dir, rules_report):
    code = RULES[rule_dir.name].code
    module = gt.load_module(rule_dir / "bad.py")
    if code in SOURCE_RULES:  # the functions reported are exactly those TensorFlow traced once per value
        reported = {f["entry"] for f in rules_report["findings"] if f["code"] == code
                    and f["path"] == str((rule_dir / "bad.py").relative_to(REPO))}
        counts = gt.tracing_counts(module)
        assert reported and reported == {name for name, count in counts.items() if count > 1}, counts
        return
    if code == "XLA301":
        models = gt.keras_models(module)
        assert models and not [name for name, model in models.items() if gt.keras_keeps_xla(model)]
        return
    assert gt.entries(module)
    for name, fn in gt.entries(module).items():
        if code.startswith("XLA2"):  # silent: it compiles and runs, and the result differs
            assert gt.compile_error(fn) is None, f"{name}: {gt.compile_error(fn)}"
            assert gt.xla_result_differs(fn), f"{name}: XLA gave TensorFlow's result, but xlalint says {code}"
        elif RULES[code].severity == "error":
            assert gt.compile_error(fn) is not None, f"{name}: XLA compiled it, but xlalint says {code}"
        else:
            assert gt.compile_error(fn) is None, f"{name}: {gt.compile_error(fn)}"
            assert WARNING_EVIDENCE[code](fn), f"{name}: the compiler shows no sign of what {code} warns about"


@pytest.mark.parametrize("rule_dir", RULE_DIRS, ids=lambda p: p.name)
def test_good_example_compiles_and_is_clean(rule_dir, rules_report):
    good = rule_dir / "good.py"
    module = gt.load_module(good)
    entries = {**gt.entries(module), **gt.model_entries(module)}
    assert entries
    for name, fn in entries.items():
        assert gt.compile_error(fn) is None, f"{name}: {gt.compile_error(fn)}"
        if rule_dir.name.startswith("XLA2"):  # (other examples may draw random numbers)
            assert not gt.xla_result_differs(fn), f"{name}: XLA's result differs from TensorFlow's"
    assert all(gt.keras_keeps_xla(model) for model in gt.keras_models(module).values())
    if rule_dir.name in SOURCE_RULES:
        assert set(gt.tracing_counts(module).values()) == {1}
    rel = str(good.relative_to(REPO))
    assert not [f for f in rules_report["findings"] if f["path"] == rel
                and (f["code"] == rule_dir.name or f["severity"] == "error")]
    verdicts = {e["name"]: e["verdict"] for e in rules_report["entries"] if e["path"] == rel}
    assert verdicts == {name: "compatible" for name in entries}


def _specializes_on_values(fn) -> bool:
    return gt.hlo_body(gt.hlo(fn, 0)) != gt.hlo_body(gt.hlo(fn, 1))


def _bounded_dynamic(fn) -> bool:
    return "<=" in gt.hlo(fn)


WARNING_EVIDENCE = {
    "XLA102": _specializes_on_values,
    "XLA103": _bounded_dynamic,
    "XLA104": gt.refuses_unknown_dims,
}
