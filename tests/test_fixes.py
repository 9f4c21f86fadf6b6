"""--diff / --fix / --unsafe-fixes: edits keep the file intact, are idempotent, and the compiler agrees."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import threading
import time

import libcst as cst
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from helpers import REPO, run_json, run_xlalint
from xlalint.fixes import fix_files
from xlalint.fixes.apply import apply_to_file
from xlalint.core.results import Finding, FixOffer

GOOD = REPO / "rules/XLA001/good.py"


def _finding(path, line, kind, safety="unsafe") -> Finding:
    return Finding("XLA403", "enable-jit-compile", "info", "m", "h", str(path), line, 1, "f",
                   fix=FixOffer(kind, safety, "d"))


@pytest.mark.tf
def test_unsafe_fix_enables_jit_compile_and_the_compiler_agrees(tmp_path):
    import groundtruth as gt  # imports TensorFlow: kept out of collection
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


@pytest.mark.tf
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
    assert b"@tf.function(jit_compile=True)  # hot path" in new and b"# keep me" in new
    assert b"jit_compile=True)  # old name" in new and b"experimental_compile" not in new
    assert b"'--tf_xla_auto_jit=2'" in new
    target.write_bytes(new)
    assert apply_to_file(str(target), findings)[1] == new


def test_the_tf_function_decorator_is_found_through_the_imports(tmp_path):
    target = tmp_path / "m.py"
    target.write_text("import tensorflow as tensorflow_lib\nimport tools\n\n"
                      "@tools.function\n@tensorflow_lib.function\ndef f(x):\n    return x\n")
    _, new, fixed = apply_to_file(str(target), [_finding(target, 6, "enable-jit-compile")])
    assert b"@tools.function\n@tensorflow_lib.function(jit_compile=True)\n" in new and len(fixed) == 1


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
    lines, findings = ["import tensorflow as tf", "from tensorflow import function", ""], []
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
    assert once.count(b"jit_compile=True") == len(functions)
    path.write_bytes(once)
    assert apply_to_file(str(path), findings)[1] == once


@pytest.mark.tf
def test_split_suggestion_for_jit_compile_functions():
    import groundtruth as gt  # imports TensorFlow: kept out of collection
    from xlalint.fixes.split import split_suggestion

    source = (REPO / "fixtures/jit_split.py").read_text()
    assert split_suggestion(source, 8, {10}) == (
        "split the function: keep line 9 compiled, then run line 10 without XLA, then keep lines 11-12 compiled")
    assert split_suggestion(source, 8, {9, 10, 11, 12}) is None
    assert split_suggestion(source, 8, {3}) is None  # a blocker in a helper it calls: no statement to name
    report, _ = run_json("fixtures/jit_split.py", "--device", "cpu")
    (finding,) = [f for f in report["findings"] if f["code"] == "XLA001"]
    assert finding["line"] == 10 and "run line 10 without XLA" in finding["hint"]
    fn = gt.load_module(REPO / "fixtures/jit_split.py").step
    assert gt.compile_error(fn) is not None


@pytest.mark.tf
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


@pytest.mark.tf
def test_jit_scope_fix_under_autocluster_marks_exactly_the_blocking_ops(tmp_path):
    import groundtruth as gt  # imports TensorFlow: kept out of collection
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


# --- fixes never damage a file: each case checked on the bytes the real command line writes ---

SIGNATURE = b"tf.float32)])"
WITH_JIT = b"tf.float32)], jit_compile=True)"
SELF_EDITING = b'''import os
import time

import tensorflow as tf

with open(os.environ["EDIT_ME"], "w") as marker:  # outside the project: the test saves this file meanwhile
    marker.write(__file__)
deadline = time.monotonic() + 120
while not open(__file__).read().endswith("# edited\\n") and time.monotonic() < deadline:
    time.sleep(0.05)


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def saved_meanwhile(x):
    return x * 8
'''


def _module(name: str, factor: int, newline: str = "\n") -> bytes:
    """A file whose one tf.function gets XLA403 (distinct names: no two files share a function)."""
    lines = ["import tensorflow as tf", "", "@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])",
             f"def {name}(x):", f"    return x * {factor}", ""]
    return newline.join(lines).encode()


def _write_project(root, chown: bool) -> dict[str, bytes]:
    """proj/ (the checked path) and outside/; returns each regular file's bytes."""
    files = {
        "proj/crlf.py": _module("crlf", 2, "\r\n"),
        "proj/mixed.py": b"import tensorflow as tf\n\r\n@tf.function(input_signature=[tf.TensorSpec([2], "
                         b"tf.float32)])\r\ndef mixed(x):\n    return x * 3  # no newline at the end",
        "proj/readonly.py": _module("readonly", 4),
        "proj/owned.py": _module("owned", 5),
        "proj/lib/real.py": _module("real", 6),
        "outside/far.py": _module("far", 7),
        "proj/selfmod.py": SELF_EDITING,
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    os.chmod(root / "proj/readonly.py", 0o444)
    os.chmod(root / "proj/owned.py", 0o640)
    if chown:
        os.chown(root / "proj/owned.py", 1234, 2345)
    os.symlink("lib/real.py", root / "proj/alias.py")
    os.symlink("../outside/far.py", root / "proj/far_link.py")
    return files


def _save_when_asked(marker, deadline_s: float = 300) -> None:
    """The user's editor: once the checked file says it is being imported (``marker``), save it again."""
    deadline = time.monotonic() + deadline_s
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if marker.exists():
        with open(marker.read_text(), "ab") as own:
            own.write(b"# edited\n")


@pytest.fixture(scope="module")
def fixed_project(tmp_path_factory):
    """The project fixed once; ``proj/selfmod.py`` is saved while xlalint imports it (the guard keeps the
    module itself from writing there)."""
    root = tmp_path_factory.mktemp("fix")
    originals = _write_project(root, chown=os.geteuid() == 0)
    marker = tmp_path_factory.mktemp("editor") / "importing"
    editor = threading.Thread(target=_save_when_asked, args=(marker,))
    editor.start()
    done = run_xlalint("proj", "--fix", "--unsafe-fixes", "--no-cache", "--device", "cpu", "--format", "json", cwd=root,
                       env={"EDIT_ME": str(marker)})
    editor.join()
    return root, originals, done


@pytest.mark.tf
def test_fix_keeps_crlf_and_mixed_line_endings(fixed_project):
    root, originals, _ = fixed_project
    for name in ("proj/crlf.py", "proj/mixed.py"):
        assert (root / name).read_bytes() == originals[name].replace(SIGNATURE, WITH_JIT)
    assert (root / "proj/crlf.py").read_bytes().count(b"\r\n") == 5


@pytest.mark.tf
@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another owner needs root")
def test_fix_keeps_owner_and_mode(fixed_project):
    root, originals, _ = fixed_project
    info = os.stat(root / "proj/owned.py")
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (1234, 2345, 0o640)
    assert (root / "proj/owned.py").read_bytes() == originals["proj/owned.py"].replace(SIGNATURE, WITH_JIT)


@pytest.mark.tf
def test_fix_refuses_a_read_only_file(fixed_project):
    root, originals, done = fixed_project
    assert "proj/readonly.py: not fixed: the file is read-only\n" in done.stderr
    assert (root / "proj/readonly.py").read_bytes() == originals["proj/readonly.py"]
    assert stat.S_IMODE(os.stat(root / "proj/readonly.py").st_mode) == 0o444


@pytest.mark.tf
def test_fix_edits_a_symlink_target_only_inside_the_checked_paths(fixed_project):
    root, originals, done = fixed_project
    assert os.readlink(root / "proj/alias.py") == "lib/real.py"  # still a link; its target fixed once
    assert (root / "proj/lib/real.py").read_bytes() == originals["proj/lib/real.py"].replace(SIGNATURE, WITH_JIT)
    assert os.readlink(root / "proj/far_link.py") == "../outside/far.py"
    assert (root / "outside/far.py").read_bytes() == originals["outside/far.py"]
    assert "proj/far_link.py: not fixed: a symbolic link to outside/far.py, which is outside the checked " \
        "paths\n" in done.stderr


@pytest.mark.tf
def test_fix_leaves_a_file_changed_since_analysis_alone(fixed_project):
    root, _, done = fixed_project
    assert (root / "proj/selfmod.py").read_bytes() == SELF_EDITING + b"# edited\n"
    assert "proj/selfmod.py: not fixed: changed since it was analysed; run again\n" in done.stderr
    # crlf, mixed, owned and real (checked once, as alias.py); what was left alone is still reported
    assert done.stderr.endswith("xlalint: fixed 4 finding(s) in 4 file(s)\n")
    assert sorted((f["path"], f["code"]) for f in json.loads(done.stdout)["findings"]) == [
        ("proj/far_link.py", "XLA403"), ("proj/readonly.py", "XLA403"), ("proj/selfmod.py", "XLA403")]


@pytest.mark.tf
def test_diff_is_byte_exactly_what_fix_writes(tmp_path, fixed_project):
    fixed_root, _, _ = fixed_project
    for copy in ("shown", "patched"):
        _write_project(tmp_path / copy, chown=False)
    done = run_xlalint("proj", "--diff", "--unsafe-fixes", "--no-cache", "--device", "cpu",
                       cwd=tmp_path / "shown", text=False)
    assert done.returncode == 1
    assert b"+@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)], jit_compile=True)\r\n" in done.stdout
    assert sorted(line for line in done.stdout.splitlines() if line.startswith(b"+++")) == [
        b"+++ b/proj/crlf.py", b"+++ b/proj/lib/real.py", b"+++ b/proj/mixed.py", b"+++ b/proj/owned.py"]
    (tmp_path / "d.patch").write_bytes(done.stdout)
    subprocess.run(["git", "apply", str(tmp_path / "d.patch")], cwd=tmp_path / "patched", check=True)
    for name in ("proj/crlf.py", "proj/mixed.py", "proj/owned.py", "proj/lib/real.py"):
        assert (tmp_path / "patched" / name).read_bytes() == (fixed_root / name).read_bytes(), name


HELPER_CALL = b"    return tf.numpy_function("
SCOPED_CALL = b"    with tf.xla.experimental.jit_scope(compile_ops=False):%s        return tf.numpy_function("
AUTOCLUSTER_FILES = {
    "proj/m.py": b'''import os
import sys

import tensorflow as tf

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bom_helpers import clip_bom  # noqa: E402
from latin_helpers import clip_latin  # noqa: E402
from shared import clip_shared  # noqa: E402


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def step(x):
    y = tf.exp(x) + clip_bom(x)
    return tf.tanh(y) + clip_latin(y) + clip_shared(y)
''',
    "proj/bom_helpers.py": b"\xef\xbb\xbfimport numpy as np\r\nimport tensorflow as tf\r\n\r\n\r\n"
                           b"def clip_bom(x):\r\n    return tf.numpy_function(np.sin, [x], tf.float32)\r\n",
    "proj/latin_helpers.py": '# -*- coding: latin-1 -*-\n"""Café helpers."""\nimport numpy as np\n'
                             'import tensorflow as tf\n\n\ndef clip_latin(x):\n'
                             '    return tf.numpy_function(np.cos, [x], tf.float32)  # été\n'.encode("latin-1"),
    "common/shared.py": b"import numpy as np\nimport tensorflow as tf\n\n\n"
                        b"def clip_shared(x):\n    return tf.numpy_function(np.tanh, [x], tf.float32)\n",
}


@pytest.fixture(scope="module")
def autocluster_project(tmp_path_factory):
    """proj/m.py's blockers sit in helpers: two in proj/ (BOM and CRLF; latin-1), one in common/."""
    root = tmp_path_factory.mktemp("autocluster-fix")
    for name, data in AUTOCLUSTER_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    done = run_xlalint("proj", "--mode", "autocluster", "--fix", "--no-cache", "--device", "cpu", cwd=root)
    return root, done


@pytest.mark.tf
def test_fix_keeps_a_bom_and_a_declared_encoding(autocluster_project):
    root, _ = autocluster_project
    assert (root / "proj/bom_helpers.py").read_bytes() == AUTOCLUSTER_FILES["proj/bom_helpers.py"].replace(
        HELPER_CALL, SCOPED_CALL % b"\r\n")
    assert (root / "proj/latin_helpers.py").read_bytes() == AUTOCLUSTER_FILES["proj/latin_helpers.py"].replace(
        HELPER_CALL, SCOPED_CALL % b"\n")


@pytest.mark.tf
def test_fix_stays_inside_the_given_paths_unless_told(autocluster_project):
    root, done = autocluster_project
    assert "common/shared.py: not fixed: outside the paths given on the command line (--fix-outside allows " \
        "it)\n" in done.stderr
    assert (root / "common/shared.py").read_bytes() == AUTOCLUSTER_FILES["common/shared.py"]
    helpers = {name: (root / name).read_bytes() for name in ("proj/bom_helpers.py", "proj/latin_helpers.py")}
    again = run_xlalint("proj", "--mode", "autocluster", "--fix", "--fix-outside", "--no-cache", "--device", "cpu",
                        cwd=root)
    assert "xlalint: fixed 1 finding(s) in 1 file(s)" in again.stderr
    assert (root / "common/shared.py").read_bytes() == AUTOCLUSTER_FILES["common/shared.py"].replace(
        HELPER_CALL, SCOPED_CALL % b"\n")
    assert all((root / name).read_bytes() == data for name, data in helpers.items())  # already inside a scope


LINE_ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])
BODY = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n#\ufeff"), max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(BODY, LINE_ENDINGS), max_size=6), st.booleans(), st.booleans(), st.data())
def test_source_round_trip_keeps_every_byte_outside_the_edit(lines, bom, open_end, data):
    """Unchanged lines keep their bytes; a line replaced by one or two lines (as the edits do) keeps its ending."""
    from xlalint.fixes.source import Source

    def raw(pairs) -> bytes:
        return (b"\xef\xbb\xbf" if bom else b"") + ("".join(body + end for body, end in pairs)
                                                    + ("x" if open_end else "")).encode()

    assume(not any(end == "\r" and not body for (_, end), (body, _) in zip(lines, lines[1:])))  # that is "\r\n"
    source = Source.decode(raw(lines))
    assert source.encode(source.text) == raw(lines)
    if lines:
        k = data.draw(st.integers(0, len(lines) - 1))
        replacement = data.draw(st.sampled_from([["EDITED"], ["EDITED", "TOO"]]))
        edited = source.text.split("\n")
        edited[k:k + 1] = replacement
        expected = lines[:k] + [(body, lines[k][1]) for body in replacement] + lines[k + 1:]
        assert source.encode("\n".join(edited)) == raw(expected)
