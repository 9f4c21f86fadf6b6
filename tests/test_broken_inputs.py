"""Bad input gets a clear per-file error; the other files of the run are still reported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import REPO, run_json, run_xlalint

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

GROWS = """import numpy as np
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([1 << 20], tf.float32)])
def grows(x):
    for step in range(200):  # a 4 MB constant a step, ~20 MB of worker memory: 4.5 GB unless stopped
        x = x + np.full(1 << 20, step, np.float32)
    return x
"""
DEEP = """import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([8], tf.float32)])
def deep(x):
    for _ in range(5000):  # four ops a step
        x = x * 1.0001 + 0.5
    return tf.numpy_function(lambda a: a, [x], tf.float32)  # line 8
"""
OVER_MEMORY = "exceeded the memory limit of 2000 MB while importing or tracing (see --max-memory)"


def test_each_broken_file_gets_its_own_error_and_good_files_still_count():
    broken = sorted(str(p.relative_to(REPO)) for p in (REPO / "fixtures/broken").glob("*.py")
                    if p.name != "hangs_at_import.py")
    report, code = run_json(*broken, "rules/XLA001/good.py", "--device", "cpu")
    errors = {e["path"].rsplit("/", 1)[-1]: e["message"] for e in report["errors"]}
    assert "syntax error at line 3" in errors["syntax_error.py"]
    assert "KeyError" in errors["raises_at_import.py"] and "line 4" in errors["raises_at_import.py"]
    assert "sys.exit(3)" in errors["exits_at_import.py"]
    assert "SIGSEGV" in errors["crashes_at_import.py"]
    assert "SIGABRT" in errors["aborts_at_import.py"]
    assert "UTF-8" in errors["latin1.py"]
    assert "no entry point found" in errors["no_entries.py"]
    assert "TensorFlow in this file" in errors["no_tensorflow.py"]
    assert {e["verdict"] for e in report["entries"]} == {"compatible"}
    assert code == 1


def test_a_hanging_module_times_out_and_the_next_file_is_still_checked():
    """The import may take three quarters of --timeout: the harness stops it there, at its line."""
    report, code = run_json("fixtures/broken/hangs_at_import.py", "rules/XLA001/good.py",
                            "--device", "cpu", "--timeout", "20")
    assert [e["message"] for e in report["errors"]] == [
        "timed out after 15s while importing (line 5) (see --timeout: the import may take 75% of it, the rest is "
        "for tracing)"]
    assert {e["verdict"] for e in report["entries"]} == {"compatible"}
    assert code == 1


def test_a_file_over_the_memory_limit_gets_an_error_and_a_big_graph_after_it_is_still_checked(tmp_path):
    (tmp_path / "grows.py").write_text(GROWS)
    (tmp_path / "deep.py").write_text(DEEP)
    report, code = run_json(str(tmp_path / "grows.py"), str(tmp_path / "deep.py"), "--device", "cpu",
                            "--max-memory", "2000", "--no-cache", "--save-graphs", str(tmp_path / "graphs"))
    assert [(e["path"].rsplit("/", 1)[-1], e["message"]) for e in report["errors"]] == [("grows.py", OVER_MEMORY)]
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("XLA001", 8)]
    graph = json.loads(next((tmp_path / "graphs").glob("*deep.deep.json")).read_text())["graph"]
    assert len(graph["nodes"]) > 20_000
    assert code == 1


def test_the_memory_limit_error_in_text_output(tmp_path):
    (tmp_path / "grows.py").write_text(GROWS)
    done = run_xlalint(str(tmp_path / "grows.py"), "rules/XLA001/good.py", "--device", "cpu",
                       "--max-memory", "2000", "--no-cache")
    assert f"grows.py: error: {OVER_MEMORY}" in done.stdout
    assert "2 entries checked for XLA on cpu: 2 compatible, 0 incompatible, 0 not traceable; 1 file errors" \
        in done.stdout
    assert done.returncode == 1


def test_a_memory_limit_below_tensorflow_itself_is_reported_for_every_file():
    report, code = run_json("rules/XLA001/good.py", "--max-memory", "50", "--no-cache")
    assert [e["message"] for e in report["errors"]] == [
        "could not start the TensorFlow worker: it exceeded the memory limit of 50 MB (see --max-memory)"]
    assert code == 2


def test_directory_scan_skips_files_without_tensorflow(tmp_path):
    (tmp_path / "util.py").write_text("def add(a, b):\n    return a + b\n")
    report, code = run_json(str(tmp_path))
    assert report["errors"] == [] and report["entries"] == [] and code == 0


def test_file_without_tensorflow_named_explicitly_is_an_error():
    report, code = run_json("fixtures/broken/no_tensorflow.py")
    assert report["errors"] == [{"path": "fixtures/broken/no_tensorflow.py",
                                 "message": "no TensorFlow in this file: nothing to check", "notice": False}]
    assert code == 2


def test_missing_path_and_bad_spec_are_usage_errors():
    report, code = run_json("does/not/exist.py")
    assert report["errors"][0]["message"] == "no such file or directory" and code == 2
    done = run_xlalint("fixtures/clean_and_untraceable.py::plain_helper", "--spec", "float32[a]")
    assert done.returncode == 2 and "dimension 'a'" in done.stderr


def test_missing_tensorflow_is_reported_clearly(tmp_path):
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['tensorflow'] = None\n")
    report, code = run_json("rules/XLA001/good.py", "--no-cache", env={"PYTHONPATH": str(tmp_path)})
    assert "TensorFlow is not installed" in report["errors"][0]["message"]
    assert code == 2


def test_unsupported_tensorflow_version_is_reported_clearly(tmp_path):
    fake = tmp_path / "tensorflow"
    fake.mkdir()
    (fake / "__init__.py").write_text("__version__ = '1.15.5'\n")
    (tmp_path / "keras.py").write_text("__version__ = '2.3.1'\n")
    report, code = run_json("rules/XLA001/good.py", "--no-cache", env={"PYTHONPATH": str(tmp_path)})
    assert "TensorFlow 1.15.5 is not supported" in report["errors"][0]["message"] and code == 2


def test_symlink_loops_and_dangling_links_do_not_hang_or_crash(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path)  # a directory that contains itself
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "self.py").symlink_to(tmp_path / "self.py")
    report, code = run_json(str(tmp_path), str(tmp_path / "self.py"))
    assert report["entries"] == [] and code == 2
    assert [e["message"] for e in report["errors"]] == ["broken or looping symbolic link"]


def _blocked(name: str, before: str = "") -> str:
    """A module whose function ``name`` calls tf.numpy_function at line 6 (plus ``before``'s lines)."""
    return f"""import tensorflow as tf
{before}

@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def {name}(v):
    return tf.numpy_function(lambda a: a, [v], tf.float32)
"""


def _chain(terms: int) -> str:
    return "x = " + "+".join(["1"] * terms) + "\n"


def _where(report: dict) -> list[tuple[str, int, int, str]]:
    return sorted((f["path"].rsplit("/", 1)[-1], f["line"], f["col"], f["code"]) for f in report["findings"])


def test_an_expression_too_deep_for_python_is_a_file_error_and_a_deep_one_python_compiles_is_traced(tmp_path):
    (tmp_path / "too_deep.py").write_text(_blocked("too_deep", _chain(4000)))  # Python's compiler gives up
    (tmp_path / "deep.py").write_text(_blocked("deep", _chain(1500)))  # deeper than libcst follows
    (tmp_path / "ok.py").write_text(_blocked("ok"))
    report, code = run_json(*(str(tmp_path / n) for n in ("too_deep.py", "deep.py", "ok.py")),
                            "--device", "cpu", "--no-cache")
    assert [(e["path"].rsplit("/", 1)[-1], e["message"]) for e in report["errors"]] == [
        ("too_deep.py", "nested too deeply for Python's compiler (RecursionError): Python cannot import it either")]
    assert _where(report) == [("deep.py", 7, 12, "XLA001"), ("ok.py", 6, 12, "XLA001")]
    assert code == 1


def test_a_nul_byte_is_a_file_error_with_its_line(tmp_path):
    (tmp_path / "nul.py").write_bytes(b"import tensorflow as tf\n\nx = 1\x00\n")
    (tmp_path / "ok.py").write_text(_blocked("ok"))
    report, code = run_json(str(tmp_path / "nul.py"), str(tmp_path / "ok.py"), "--device", "cpu", "--no-cache")
    assert [(e["path"].rsplit("/", 1)[-1], e["message"]) for e in report["errors"]] == [
        ("nul.py", "NUL byte at line 3: Python cannot compile a file that contains one")]
    assert _where(report) == [("ok.py", 6, 12, "XLA001")]
    assert code == 1


def test_a_file_with_a_byte_order_mark_is_checked_as_python_imports_it(tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + _blocked("with_bom").encode())
    report, code = run_json(str(tmp_path / "bom.py"), "--device", "cpu", "--no-cache")
    assert report["errors"] == []
    assert [(e["name"], e["line"], e["verdict"]) for e in report["entries"]] == [("with_bom", 5, "incompatible")]
    assert _where(report) == [("bom.py", 6, 12, "XLA001")]
    assert code == 1


def test_a_file_named_several_ways_is_checked_once_under_its_first_name(tmp_path):
    (tmp_path / "ok.py").write_text(_blocked("ok"))
    (tmp_path / "link.py").symlink_to(tmp_path / "ok.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text(_blocked("in_sub"))
    report, code = run_json("ok.py", "./ok.py", "link.py", "sub", "sub/b.py", "--device", "cpu", "--no-cache",
                            cwd=tmp_path)
    assert sorted((e["path"], e["name"]) for e in report["entries"]) == [("ok.py", "ok"), ("sub/b.py", "in_sub")]
    assert sorted((f["path"], f["line"]) for f in report["findings"]) == [("ok.py", 6), ("sub/b.py", 6)]
    assert code == 1


def test_a_compiled_function_run_at_import_is_captured_not_compiled(tmp_path):
    """A script that runs a compiled function at import (a tutorial training at module level): the call is
    captured and answered without XLA, so the blocker is a finding at its line, not the file's error; run for
    real, the same call fails in the compiler on that op."""
    script = tmp_path / "trains_at_import.py"
    script.write_text("import tensorflow as tf\n\n"
                      "step = tf.function(lambda x: tf.py_function(tf.sort, [x], tf.float32), jit_compile=True)\n"
                      "step(tf.ones([4]))  # line 4\n")
    report, code = run_json(str(script), "--device", "cpu", "--no-cache")
    assert report["errors"] == [] and code == 1
    assert [(f["code"], f["line"], f["op_type"]) for f in report["findings"] if f["severity"] == "error"] == [
        ("XLA001", 3, "EagerPyFunc")]
    real = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert real.returncode != 0 and "EagerPyFunc" in real.stderr
