"""--diff / --fix / --unsafe-fixes: edits keep the file intact, are idempotent, and the compiler agrees."""

from __future__ import annotations

import os
import shutil
import stat

import libcst as cst
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

import groundtruth as gt
from conftest import REPO, run_json, run_xlalint
from xlalint.fixes import fix_files
from xlalint.fixes.apply import apply_to_file
from xlalint.results import Finding

GOOD = REPO / "rules/XLA001/good.py"


def _finding(path, line, kind, safety="unsafe") -> Finding:
    return Finding("XLA403", "enable-jit-compile", "info", "m", "h", str(path), line, 1, "f",
                   fix={"kind": kind, "safety": safety, "description": "d"})


def test_unsafe_fix_enables_jit_compile_and_the_compiler_agrees(tmp_path):
    target = tmp_path / "model.py"
    shutil.copy(GOOD, target)
    os.chmod(target, 0o640)
    report, _ = run_json(str(target), "--device", "cpu")
    offered = [f for f in report["findings"] if f["code"] == "XLA403"]
    assert {f["entry"] for f in offered} == {"scale_on_device", "histogram"}
    assert all(f["fix"]["safety"] == "unsafe" for f in offered)

    before = target.read_text()
    assert run_xlalint(str(target), "--fix", "--device", "cpu").returncode == 0
    assert target.read_text() == before  # unsafe fixes need --unsafe-fixes

    done = run_xlalint(str(target), "--fix", "--unsafe-fixes", "--device", "cpu")
    assert "fixed 2 finding(s) in 1 file(s)" in done.stderr
    fixed = target.read_text()
    assert fixed.count("jit_compile=True") == 2 and stat.S_IMODE(os.stat(target).st_mode) == 0o640
    report, _ = run_json(str(target), "--device", "cpu")
    assert not [f for f in report["findings"] if f["code"] == "XLA403"]
    assert run_xlalint(str(target), "--fix", "--unsafe-fixes", "--device", "cpu").returncode == 0
    assert target.read_text() == fixed  # idempotent

    module = gt.load_module(target)
    for fn in gt.entries(module).values():
        assert fn._jit_compile is True
        fn(*gt.make_args(fn))  # compiles and runs under XLA


def test_diff_shows_and_changes_nothing(tmp_path):
    target = tmp_path / "model.py"
    shutil.copy(GOOD, target)
    done = run_xlalint(str(target), "--diff", "--unsafe-fixes", "--device", "cpu")
    assert done.returncode == 1 and "+@tf.function(input_signature=[tf.TensorSpec([4, 8], tf.float32)], " \
        "jit_compile=True)" in done.stdout
    assert target.read_text() == GOOD.read_text()


def test_edits_keep_comments_and_rename_the_old_keyword(tmp_path):
    target = tmp_path / "m.py"
    target.write_text(
        "import tensorflow as tf\n\n"
        "@tf.function  # hot path\n"
        "def f(x):\n    return x  # keep me\n\n"
        "g = tf.function(lambda x: x, experimental_compile=True)  # old name\n"
        "FLAGS = '--tf_xla_enable_xla_devices'\n"
    )
    findings = [_finding(target, 4, "enable-jit-compile"), _finding(target, 7, "jit-compile-keyword", "safe"),
                _finding(target, 8, "auto-jit-flag")]
    _, new, fixed = apply_to_file(str(target), findings)
    assert len(fixed) == 3
    assert "@tf.function(jit_compile=True)  # hot path" in new and "# keep me" in new
    assert "jit_compile=True)  # old name" in new and "experimental_compile" not in new
    assert "'--tf_xla_auto_jit=2'" in new
    target.write_text(new)
    assert apply_to_file(str(target), findings)[1] == new


def test_a_fix_that_would_not_parse_leaves_the_file_alone(tmp_path, monkeypatch):
    target = tmp_path / "m.py"
    source = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n"
    target.write_text(source)
    monkeypatch.setattr(cst.Module, "code", property(lambda self: "def broken(:\n"))
    (outcome,) = fix_files([_finding(target, 4, "enable-jit-compile")], unsafe=True, write=True)
    assert outcome.error and "would not parse" in outcome.error and target.read_text() == source


DECORATORS = st.sampled_from([
    "@tf.function", "@tf.function()", "@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])",
    "@tf.function(jit_compile=False)", "@tf.function(experimental_compile=False)",
    "@tf.function(\n    reduce_retracing=True,  # comment\n)", "@function",
])
OTHER = st.sampled_from(["", "@staticmethod\n", "# note\n", "@functools.wraps(g)\n"])
BODIES = st.sampled_from(["return x", "y = x * 2  # double\n    return y", "'''doc'''\n    return x"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(OTHER, DECORATORS, BODIES), min_size=1, max_size=4))
def test_fixes_always_parse_and_are_idempotent(tmp_path_factory, functions):
    lines, findings = ["import tensorflow as tf", ""], []
    path = tmp_path_factory.mktemp("prop") / "m.py"
    for i, (other, decorator, body) in enumerate(functions):
        lines += (other + decorator).splitlines()
        lines.append(f"def f{i}(x):")
        findings.append(_finding(path, len(lines), "enable-jit-compile"))
        lines += ["    " + line.strip() if not line.startswith("    ") else line for line in body.split("\n")]
        lines.append("")
    path.write_text("\n".join(lines))
    _, once, _ = apply_to_file(str(path), findings)
    compile(once, "m.py", "exec")
    assert once.count("jit_compile=True") == len(functions)
    path.write_text(once)
    assert apply_to_file(str(path), findings)[1] == once


def test_split_suggestion_for_jit_compile_functions():
    from xlalint.fixes.split import split_suggestion

    source = (REPO / "fixtures/jit_split.py").read_text()
    assert split_suggestion(source, 8, {10}) == (
        "split the function: keep line 9 compiled, then run line 10 without XLA, then keep lines 11-12 compiled")
    assert split_suggestion(source, 8, {9, 10, 11, 12}) is None
    report, _ = run_json("fixtures/jit_split.py", "--device", "cpu")
    (finding,) = [f for f in report["findings"] if f["code"] == "XLA001"]
    assert finding["line"] == 10 and "run line 10 without XLA" in finding["hint"]
    fn = gt.load_module(REPO / "fixtures/jit_split.py").step
    assert gt.compile_error(fn) is not None


def test_devices_flag_in_shell_scripts_and_dockerfiles_is_found_and_fixed(tmp_path):
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.11\nENV TF_XLA_FLAGS="--tf_xla_enable_xla_devices"\n# TF_XLA_FLAGS=--tf_xla_enable_xla_devices\n')
    (tmp_path / "train.sh").write_text('export TF_XLA_FLAGS="--tf_xla_enable_xla_devices=false"\npython train.py\n')
    for mode in ([], ["--static"]):
        report, _ = run_json(str(tmp_path), *mode)
        assert [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in report["findings"]] == [
            ("XLA402", "Dockerfile", 2)]
    assert run_xlalint(str(tmp_path / "Dockerfile"), "--fix").returncode == 0
    assert "--tf_xla_enable_xla_devices\"" in (tmp_path / "Dockerfile").read_text()  # unsafe: not applied
    run_xlalint(str(tmp_path / "Dockerfile"), "--fix", "--unsafe-fixes")
    fixed = (tmp_path / "Dockerfile").read_text()
    assert 'ENV TF_XLA_FLAGS="--tf_xla_auto_jit=2"' in fixed and fixed.endswith("devices\n")  # comment kept
    report, _ = run_json(str(tmp_path))
    assert report["findings"] == []


def test_jit_scope_fix_under_autocluster_marks_exactly_the_blocking_ops(tmp_path):
    target = tmp_path / "m.py"
    shutil.copy(REPO / "fixtures/autocluster/split_by_numpy_function.py", target)
    report, _ = run_json(str(target), "--mode", "autocluster", "--device", "cpu")
    blockers = [f for f in report["findings"] if f["code"] == "XLA001"]
    assert blockers and all(f["fix"]["kind"] == "jit-scope" and f["fix"]["safety"] == "safe" for f in blockers)
    plain, _ = run_json(str(target), "--device", "cpu")
    assert all(f["fix"] is None for f in plain["findings"] if f["code"] == "XLA001")  # jit mode: no escape hatch

    done = run_xlalint(str(target), "--mode", "autocluster", "--device", "cpu", "--fix")
    assert "fixed 2 finding(s)" in done.stderr
    fixed = target.read_text()
    assert fixed.count("with tf.xla.experimental.jit_scope(compile_ops=False):") == 2
    run_xlalint(str(target), "--mode", "autocluster", "--device", "cpu", "--fix")
    assert target.read_text() == fixed  # idempotent: already inside the scope

    module = gt.load_module(target)
    wrapped = {i + 2 for i, line in enumerate(fixed.splitlines()) if "jit_scope(compile_ops=False)" in line}
    for fn in gt.entries(module).values():
        graph = fn.get_concrete_function().graph
        for op in graph.get_operations():
            lines = [f.lineno for f in op.traceback or () if f.filename == str(target)]
            line = lines[-1] if lines else None
            try:
                excluded = op.get_attr("_XlaCompile") is False
            except ValueError:
                excluded = False
            if op.type not in ("Placeholder", "NoOp", "Identity"):
                assert excluded == (line in wrapped), (op.type, op.name, line)
