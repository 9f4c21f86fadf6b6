"""Every rule example in rules/ is checked by xlalint AND by the real XLA compiler.

bad.py: xlalint reports the rule's code exactly at the ``# expect:`` lines, and
the compiler agrees: error rules fail to compile, warning rules show the
specialization they warn about, XLA2xx rules compile and run but return
another result than TensorFlow without XLA. Rules that are not about one op
graph ask TensorFlow their own question (``BAD_EVIDENCE``): XLA107 how often it
traced, XLA301 whether Keras kept XLA, XLA401/XLA403 how many XLA executables a
call builds, XLA402 the same in a process that sets the flags, XLA801 whether
the suppressed line compiles. good.py: compiles, runs to TensorFlow's result,
and gets no finding of that code and no error at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import REPO
from xlalint.backend.verify.compare import compilations
from xlalint.checks import RULES

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

RULE_DIRS = sorted(p for p in (REPO / "rules").iterdir()  # structure: test_docs.py; run rules: test_run_rules.py
             if (p / "bad.py").is_file() and RULES[p.name].stage != "captured")
FRESH_PROCESS = {"XLA402"}  # examples that set TF_XLA_FLAGS: run each in a process of its own


def _found(report: dict, path: Path, code: str | None = None) -> set[tuple[str, int]]:
    rel = str(path.relative_to(REPO))
    return {(f["code"], f["line"]) for f in report["findings"]
            if f["path"] == rel and (code is None or f["code"] == code)}


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
    if code in BAD_EVIDENCE:  # not a question about one op graph: the rule asks its own
        BAD_EVIDENCE[code](rule_dir, rules_report)
        return
    module = gt.load_module(rule_dir / "bad.py")
    assert gt.entries(module)
    for name, fn in gt.entries(module).items():
        if code.startswith("XLA2"):  # silent: it compiles and runs, and the result differs
            if gt.compile_error(fn) is not None:  # where this release's compiler refuses it, the finding says so
                found = _entry_findings(rules_report, rule_dir, code, name)
                assert any("refuses to compile" in f["message"] for f in found), f"{name}: {gt.compile_error(fn)}"
                continue
            assert gt.xla_result_differs(fn), f"{name}: XLA gave TensorFlow's result, but xlalint says {code}"
        elif RULES[code].severity == "error":
            assert gt.compile_error(fn) is not None, f"{name}: XLA compiled it, but xlalint says {code}"
        else:
            assert code in WARNING_EVIDENCE, (f"{code} is a warning about one op graph: add to WARNING_EVIDENCE "
                                              "(or BAD_EVIDENCE) how the compiler shows what it warns about")
            assert gt.compile_error(fn) is None, f"{name}: {gt.compile_error(fn)}"
            assert WARNING_EVIDENCE[code](fn), f"{name}: the compiler shows no sign of what {code} warns about"


@pytest.mark.parametrize("rule_dir", RULE_DIRS, ids=lambda p: p.name)
def test_good_example_compiles_and_is_clean(rule_dir, rules_report):
    good = rule_dir / "good.py"
    rel = str(good.relative_to(REPO))
    assert not [f for f in rules_report["findings"] if f["path"] == rel
                and (f["code"] == rule_dir.name or f["severity"] == "error")]
    verdicts = {e["name"]: e["verdict"] for e in rules_report["entries"] if e["path"] == rel}
    if rule_dir.name in FRESH_PROCESS:
        built = _in_fresh_process(good)["built"]
        assert built and all(count >= 1 for count in built.values()), built
        assert verdicts == {name: "compatible" for name in built}
        return
    module = gt.load_module(good)
    compiled = gt.compiled_models(module)
    fits = {f"{name}.fit" for name in compiled}  # the train step Keras compiles for fit (it checks the model too)
    entries = {**gt.entries(module), **gt.model_entries(module)}
    assert entries
    for name, fn in entries.items():
        assert gt.compile_error(fn) is None, f"{name}: {gt.compile_error(fn)}"
        if rule_dir.name.startswith("XLA2"):  # (other examples may draw random numbers)
            assert not gt.xla_result_differs(fn), f"{name}: XLA's result differs from TensorFlow's"
    assert all(gt.keras_keeps_xla(model) for model in gt.keras_models(module).values())
    if rule_dir.name == "XLA107":
        assert set(gt.tracing_counts(module).values()) == {1}
    assert verdicts == {name: "compatible" for name in [*(n for n in entries if n not in compiled), *fits]}


def _specializes_on_values(fn) -> bool:
    return gt.hlo_body(gt.hlo(fn, 0)) != gt.hlo_body(gt.hlo(fn, 1))


def _bounded_dynamic(fn) -> bool:
    return "<=" in gt.hlo(fn)


WARNING_EVIDENCE = {
    "XLA102": _specializes_on_values,
    "XLA103": _bounded_dynamic,
    "XLA104": gt.refuses_unknown_dims,
}


def _entry_findings(report: dict, rule_dir: Path, code: str, entry: str) -> list[dict]:
    rel = str((rule_dir / "bad.py").relative_to(REPO))
    return [f for f in report["findings"] if f["code"] == code and f["path"] == rel and f["entry"] == entry]


def _reported(report: dict, path: Path, code: str) -> set[str]:
    return {f["entry"] for f in report["findings"] if f["code"] == code and f["path"] == str(path.relative_to(REPO))}


def _executables_built(fn) -> int:
    """XLA executables built by calling ``fn`` as written, once (counted as --verify counts them)."""
    gt.skip_without_counts()
    with tf.device("/CPU:0"), compilations("CPU") as built:
        fn(*gt.make_args(fn))
    assert built["count"] is not None, "no profiler session"
    return built["count"]


def _in_fresh_process(path: Path, *replace: str) -> dict:
    """tests/flags_probe.py's answer for an example that sets TF_XLA_FLAGS itself."""
    gt.skip_without_counts()
    env = {k: v for k, v in os.environ.items() if k != "TF_XLA_FLAGS"}
    done = subprocess.run([sys.executable, str(REPO / "tests" / "flags_probe.py"), str(path), *replace],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _python_numbers_retrace(rule_dir, report):
    """XLA107: the functions reported are exactly those TensorFlow traced once per value."""
    counts = gt.tracing_counts(gt.load_module(rule_dir / "bad.py"))
    reported = _reported(report, rule_dir / "bad.py", "XLA107")
    assert reported and reported == {name for name, count in counts.items() if count > 1}, counts


def _keras_turns_xla_off(rule_dir, report):
    models = gt.keras_models(gt.load_module(rule_dir / "bad.py"))
    assert models and not [name for name, model in models.items() if gt.keras_keeps_xla(model)]


def _fit_executables(model) -> int:
    """XLA executables one step of ``fit`` builds, with the jit_compile Keras decided for the model."""
    gt.skip_without_counts()
    with tf.device("/CPU:0"), compilations("CPU") as built:
        model.fit(*gt.sample_batch(model), batch_size=4, epochs=1, verbose=0)
    assert built["count"] is not None, "no profiler session"
    return built["count"]


def _keras_trains_without_xla(rule_dir, report):
    """XLA302/XLA303: Keras keeps each compiled model of bad.py off XLA (its own jit_compile) and one
    train step builds no XLA executable; good.py's models keep XLA and build one."""
    for name, with_xla in (("bad.py", False), ("good.py", True)):
        models = gt.compiled_models(gt.load_module(rule_dir / name))
        assert models, f"{name} compiles no Keras model"
        for model_name, model in models.items():
            assert (model.jit_compile is True) == with_xla, f"{name}::{model_name}: jit_compile={model.jit_compile}"
            assert (_fit_executables(model) >= 1) == with_xla, f"{name}::{model_name}"


def _old_keyword_compiles(rule_dir, report):
    """XLA401: experimental_compile=True compiles with XLA, to the HLO of jit_compile=True."""
    bad, good = (gt.entries(gt.load_module(rule_dir / name)) for name in ("bad.py", "good.py"))
    assert bad and bad.keys() == good.keys()
    for name, fn in bad.items():
        assert _executables_built(fn) >= 1, f"{name}: experimental_compile=True built no XLA executable"
        assert gt.hlo_body(gt.hlo(fn)) == gt.hlo_body(gt.hlo(good[name]))


def _devices_flag_compiles_nothing(rule_dir, report):
    """XLA402: the flag creates XLA devices and compiles nothing; the fix's flag compiles the same code."""
    bad = rule_dir / "bad.py"
    as_written = _in_fresh_process(bad)
    assert as_written["xla_devices"], as_written  # TensorFlow did read the flag
    assert as_written["built"] and set(as_written["built"].values()) == {0}, as_written
    fixed = _in_fresh_process(bad, "--tf_xla_enable_xla_devices", "--tf_xla_auto_jit=2")
    assert fixed["built"].keys() == as_written["built"].keys() and min(fixed["built"].values()) >= 1, fixed


def _offered_functions_run_without_xla(rule_dir, report):
    """XLA403: exactly the functions that build no XLA executable are offered; XLA compiles each,
    to the HLO of good.py's jit_compile=True twin, which does build one."""
    bad, good = (gt.entries(gt.load_module(rule_dir / name)) for name in ("bad.py", "good.py"))
    assert bad and bad.keys() == good.keys()
    without_xla = {name for name, fn in bad.items() if _executables_built(fn) == 0}
    assert _reported(report, rule_dir / "bad.py", "XLA403") == without_xla == set(bad)
    for name, fn in bad.items():
        assert gt.compile_error(fn) is None, f"{name}: {gt.compile_error(fn)}"
        assert gt.hlo_body(gt.hlo(fn)) == gt.hlo_body(gt.hlo(good[name]))
        assert _executables_built(good[name]) >= 1


def _suppressed_line_compiles(rule_dir, report):
    """XLA801: the function under the stale comment compiles and runs: nothing there to suppress."""
    entries = gt.entries(gt.load_module(rule_dir / "bad.py"))
    assert entries
    for name, fn in entries.items():
        assert gt.compile_error(fn) is None, f"{name}: {gt.compile_error(fn)}"


BAD_EVIDENCE = {
    "XLA107": _python_numbers_retrace,
    "XLA301": _keras_turns_xla_off,
    "XLA302": _keras_trains_without_xla,
    "XLA303": _keras_trains_without_xla,
    "XLA401": _old_keyword_compiles,
    "XLA402": _devices_flag_compiles_nothing,
    "XLA403": _offered_functions_run_without_xla,
    "XLA801": _suppressed_line_compiles,
}
