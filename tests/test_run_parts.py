"""The TensorFlow-free parts of `xlalint run`: the command line, the scratch mirror, the report."""

import importlib.util
import json
import os
import sys

import pytest

from helpers import REPO, run_without_tf
from xlalint.report import EMITTERS
from xlalint.cli.run import _module_file, _parser, split_command
from xlalint.autocluster.program import AS_IF_JIT, AUTO_CLUSTERING, CPU_NOTE, entry_mode
from xlalint.run.report import defined_tf_functions, run_report, seen_mode
from xlalint.process.scratch import make_scratch, remove_scratch
from xlalint.engine.entries import NO_GRAPH
from xlalint.fixes import Guard, fix_files
from xlalint.settings.table import Options


@pytest.mark.parametrize("argv, ours, theirs", [
    (["--format", "json", "train.py", "--epochs", "2"], ["--format=json", "train.py"], ["--epochs", "2"]),
    (["-q", "--format=sarif", "train.py", "-q"], ["-q", "--format=sarif", "train.py"], ["-q"]),
    (["-m", "pkg.train", "--lr", "1"], ["-m", "pkg.train"], ["--lr", "1"]),
    (["--", "-odd.py", "x"], ["-odd.py"], ["x"]),
    (["--quiet"], ["--quiet"], []),
    (["--command", "-m pkg.train --lr 1", "--jobs", "2"], ["--command=-m pkg.train --lr 1", "--jobs=2"], []),
    (["-j", "2", "--config", "c.toml", "-m", "pkg"], ["-j", "2", "--config=c.toml", "-m", "pkg"], []),
])
def test_options_before_the_script_are_ours_the_rest_the_scripts(argv, ours, theirs):
    assert split_command(argv, _parser()) == (ours, theirs)


def test_a_long_options_value_that_starts_with_a_dash_is_its_value():
    parser = _parser()
    ours, theirs = split_command(["--write-baseline", "-found.json", "--quiet", "--config", "-x.toml"], parser)
    assert (ours, theirs) == (["--write-baseline=-found.json", "--quiet", "--config=-x.toml"], [])
    args = parser.parse_args(ours)
    assert (args.write_baseline, args.quiet, args.config) == ("-found.json", True, "-x.toml")


def test_usage_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # this checkout's xlalint, from another working directory
    (tmp_path / "train.py").write_text("print(1)\n")
    for args, message in [((), "give a SCRIPT, -m MODULE or --command"),
                          (("missing.py",), "no such script: missing.py"),
                          (("-m", "no_such_module_here"), "no module named 'no_such_module_here'"),
                          (("--command", "train.py", "train.py"), "give a SCRIPT, -m MODULE or --command (one of"),
                          (("--command", "-x train.py"), "--command '-x train.py': give a quoted `SCRIPT ARGS...`"),
                          (("--command", "train.py", "--command", "gone.py --epochs 1"),
                           "run command 'gone.py --epochs 1': no such script: gone.py")]:
        done = run_without_tf("run", *args, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr, done.stderr


def test_the_scratch_mirror_links_every_file_and_skips_version_control(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.csv").write_text("1,2\n")
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    scratch = make_scratch(str(tmp_path))
    try:
        assert os.readlink(os.path.join(scratch, "data", "x.csv")) == str(tmp_path / "data" / "x.csv")
        assert os.path.islink(os.path.join(scratch, "train.py"))
        assert not os.path.exists(os.path.join(scratch, ".git"))
    finally:
        remove_scratch(scratch)
    assert not os.path.exists(scratch)


def test_the_scratch_mirror_of_the_temporary_folder_leaves_itself_out(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # the scratch folder is made inside the mirrored one
    (tmp_path / "train.py").write_text("print(1)\n")
    scratch = make_scratch(str(tmp_path))
    try:
        assert sorted(os.listdir(scratch)) == ["train.py"]
    finally:
        remove_scratch(scratch)


SCRIPT = '''import tensorflow as tf


@tf.function
def helper(x):
    return x


@tf.function(jit_compile=True)
def step(x):
    return helper(x)


def main():
    @tf.function(jit_compile=True)
    def inner(x):
        return x
'''


def test_the_tf_functions_a_script_defines(tmp_path):
    (tmp_path / "s.py").write_text(SCRIPT)
    assert defined_tf_functions(str(tmp_path / "s.py")) == [("helper", 5), ("step", 10), ("inner", 16)]
    (tmp_path / "s.py").write_text("import tensorflow as tensorflow_lib\nfrom tools import function\n\n"
                                   "@tensorflow_lib.function\ndef step(x):\n    return x\n\n"
                                   "@function\ndef helper(x):\n    return x\n")
    assert defined_tf_functions(str(tmp_path / "s.py")) == [("step", 5)]  # read through the imports


def test_a_run_that_stopped_before_any_call_is_a_file_error_with_its_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text(SCRIPT)
    result = {"tensorflow": "2.21.0", "records": [], "calls": 0, "redirected": ["logs/a", "logs/b"], "refused": [],
              "stop": {"kind": "error", "reason": "the script raised OSError: no data", "where": [str(tmp_path / "s.py"), 12, "main"]}}
    report = run_report(result, "s.py", Options(device="cpu"))
    assert [e.message for e in report.errors] == [
        "the script raised OSError: no data at s.py:12 in `main()`, before any tf.function was called"]
    assert [(e.name, e.line, e.verdict) for e in report.entries] == [("helper", 5, "unknown"), ("step", 10, "unknown"),
                                                                       ("inner", 16, "unknown")]
    assert report.run["written_to_scratch"] == ["logs"]
    assert "run of s.py stopped at s.py:12 in `main()`: the script raised OSError" in EMITTERS["text"](report)
    assert json.loads(EMITTERS["json"](report))["run"]["stopped"] == "error"


def _run_of(script: str, stopped: str) -> dict:
    return {"script": script, "stopped": stopped, "reason": f"the script {stopped}", "where": None, "calls": 1,
            "written_to_scratch": [], "refused_writes": []}


def test_the_runs_of_listed_commands_make_one_report():
    from xlalint.cli.common import exit_code
    from xlalint.core.results import Entry, Finding, Report
    from xlalint.run.listed import together

    blocker = Finding("XLA001", "unsupported-op", "error", "`tf.print` (PrintV2) has no XLA kernel", "drop it",
                      "train.py", 9, 5, "train_step")
    first = Report(device="cpu", entries=[Entry("train.py", "train_step", 8, "compatible"),
                                          Entry("train.py", "eval_step", 20, "unknown", "never called")],
                   run=_run_of("train.py", "ended"))
    second = Report(device="cpu", entries=[Entry("train.py", "train_step", 8, "incompatible"),
                                           Entry("train.py", "eval_step", 20, "unknown", "never called")],
                    findings=[blocker], run=_run_of("train.py", "captured"))
    third = Report(device="cpu", entries=[Entry("train.py", "train_step", 8, "incompatible")], findings=[blocker],
                   run=_run_of("train.py", "captured"))
    report = together([first, second, third], ["train.py", "train.py --debug", "train.py --debug --epochs 2"])
    assert [(e.name, e.verdict) for e in report.entries] == [("train_step", "incompatible"), ("eval_step", "unknown")]
    assert [(f.code, f.line, f.all_entries) for f in report.findings] == [("XLA001", 9, ("train_step",))]
    assert exit_code(report) == 1 and exit_code(first) == 0
    assert [(r["command"], r["stopped"]) for r in json.loads(EMITTERS["json"](report))["runs"]] == [
        ("train.py", "ended"), ("train.py --debug", "captured"), ("train.py --debug --epochs 2", "captured")]
    assert "run of `train.py --debug` stopped: the script captured" in EMITTERS["text"](report)


RUN_RULES_SCRIPT = '''import tensorflow as tf


@tf.function(jit_compile=True)
def step(x, lr):
    return x * lr


def make(values):
    return tf.data.Dataset.from_tensor_slices(values).batch(64)


@tf.function(jit_compile=True)
def grow(x):  # xlalint: ignore[XLA109]
    return x


@tf.function
def plain(x):
    return x


@tf.function
def lazy(x):
    return x
'''


def _captured(tmp_path, name: str, line: int, **seen) -> dict:
    """A record as the run's capture writes it (xlalint/backend/run/capture.py), with what the run saw."""
    path = str(tmp_path / "s.py")
    return {"name": name, "line": line, "kind": "tf.function", "jit_compile": True, "error": None,
            "graph": NO_GRAPH, "signature": [{"dtype": "float32", "shape": [64, 8]}], "path": path,
            "call": [path, 20, "main"], "traces": 1, "calls": 1, "trace_args": [], "functions": 1, "made_at": [],
            "batches": [], "variables": [], "unliftable": None, **seen}


def test_the_run_rules_on_what_a_run_saw(tmp_path, monkeypatch):
    """XLA108/109/110/304 from recorded captures: places, verdicts, suppression comments, the fix."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text(RUN_RULES_SCRIPT)
    path = str(tmp_path / "s.py")
    trace_args = [[["x", "'float32[64,8]'"], ["lr", repr(lr)]] for lr in (0.1, 0.05, 0.025, 0.0125)]
    records = [
        _captured(tmp_path, "step", 5, traces=4, trace_args=trace_args, functions=3, made_at=[[path, 21, "main"]],
                  batches=[{"site": [path, 10, "make"], "batch_size": 64, "size": 1000, "left": 40,
                            "relaxed": [{"dtype": "float32", "shape": [None, 8]}]}],
                  variables=[[path, 6, "step"]], unliftable="Unable to lift tensor <tf.Tensor 'x:0' ...>"),
        _captured(tmp_path, "grow", 14, traces=5, trace_args=[[["x", f"'float32[{n}]'"]] for n in range(5)]),
        _captured(tmp_path, "plain", 19, jit_compile=None),
        _captured(tmp_path, "lazy", 24, jit_compile=None, unliftable="Unable to lift tensor <tf.Tensor 'x:0' ...>"),
    ]
    result = {"tensorflow": "2.21.0", "records": records, "calls": 9, "redirected": [], "refused": [],
              "stop": {"kind": "ended", "reason": "the script ended", "where": None}}
    report = run_report(result, "s.py", Options(device="cpu"))
    found = {(f.code, f.line, f.entry) for f in report.findings if f.code.startswith(("XLA1", "XLA3"))}
    assert found == {("XLA108", 10, "step"), ("XLA109", 5, "step"), ("XLA110", 5, "step"), ("XLA304", 6, "step")}
    said = {f.code: f.message for f in report.findings}
    assert "a new value of `lr` (0.1, 0.05, 0.025, ...)" in said["XLA109"] and "traced 4 times" in said["XLA109"]
    assert "1000 elements in batches of 64 leave 40" in said["XLA108"] and "(float32[None,8])" in said["XLA108"]
    assert {e.name: e.verdict for e in report.entries} == {"step": "incompatible", "grow": "compatible",
                                                           "plain": "compatible", "lazy": "compatible"}
    assert [f.entry for f in report.findings if f.code == "XLA403"] == ["plain"]  # lazy's variable refuses XLA
    [batch] = [f for f in report.findings if f.code == "XLA108"]
    assert batch.fix.safety == "unsafe" and batch.related[0].line == 5
    outcomes = fix_files([batch], unsafe=True, write=True, guard=Guard(roots=[str(tmp_path)], sources=report.sources))
    assert [len(o.fixed) for o in outcomes] == [1]
    assert (tmp_path / "s.py").read_text().splitlines()[9] == \
        "    return tf.data.Dataset.from_tensor_slices(values).batch(64, drop_remainder=True)"


def test_auto_clustering_as_the_run_showed_it_decides_over_the_files(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import tensorflow as tf\nif False:\n    tf.config.optimizer.set_jit(True)\n")
    assert entry_mode(str(script), None, "auto", "cpu").name == AUTO_CLUSTERING  # read from the file
    assert entry_mode(str(script), None, "auto", "cpu", seen_mode(None)).name == AS_IF_JIT  # the run: it stayed off
    by_flags = entry_mode(str(script), None, "auto", "cpu", seen_mode(
        {"where": None, "flags": " --tf_xla_auto_jit=2 --tf_xla_cpu_global_jit", "cpu_global_jit": True}))
    assert (by_flags.name, by_flags.source, by_flags.note) == (
        AUTO_CLUSTERING, "TF_XLA_FLAGS=--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit in the run", None)
    by_call = entry_mode(str(script), None, "auto", "cpu", seen_mode(
        {"where": [str(script), 3], "flags": None, "cpu_global_jit": False}))
    assert (by_call.name, by_call.note) == (AUTO_CLUSTERING, CPU_NOTE) and by_call.source.endswith("train.py:3 in the run")
    assert entry_mode(str(script), True, "auto", "cpu", seen_mode(None)).name == "jit_compile"


def test_a_module_run_with_m_is_found_without_importing_its_packages(tmp_path, monkeypatch):
    """Its file is read for the libraries to preload; a package's ``__init__`` is the user's code and runs
    only in the run's child (here it would raise)."""
    package = tmp_path / "pkg" / "jobs"
    package.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("raise RuntimeError('imported by xlalint itself')\n")
    (package / "__init__.py").write_text("raise RuntimeError('imported by xlalint itself')\n")
    (package / "train.py").write_text("import tensorflow\n")
    (package / "__main__.py").write_text("import tensorflow\n")
    monkeypatch.chdir(tmp_path)
    assert _module_file(_parser(), "pkg.jobs.train") == str(package / "train.py")
    assert _module_file(_parser(), "pkg.jobs") == str(package / "__main__.py")  # a package runs its __main__
    assert "pkg" not in sys.modules


@pytest.mark.parametrize("module, message", [
    ("pkg.missing", "no module named 'pkg.missing' to run, from "),
    ("pkg", "no module named 'pkg' to run, from "),  # a package without __main__.py: Python cannot run it either
    ("pkg..train", "no module named 'pkg..train': its name has an empty part"),
])
def test_a_module_not_found_is_a_usage_error_and_its_package_never_runs(tmp_path, module, message):
    """Python would import ``pkg`` to look further: xlalint never runs the user's code in its own process."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("open('imported_by_xlalint', 'w').close()\n")
    (tmp_path / "pkg" / "train.py").write_text("import tensorflow\n")
    done = run_without_tf("run", "-m", module, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not (tmp_path / "imported_by_xlalint").exists()


def test_a_top_level_package_only_an_installs_finder_knows_is_found_without_importing_it(tmp_path, monkeypatch):
    """An editable install's finder (on ``sys.meta_path``, no folder on ``sys.path``) is asked for the
    package; its submodule is then found in the package's folder, and the package's ``__init__`` never runs."""
    package = tmp_path / "installed" / "edpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('imported by xlalint itself')\n")
    (package / "train.py").write_text("import tensorflow\n")

    class EditableFinder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            return importlib.util.spec_from_file_location(name, package / "__init__.py") if name == "edpkg" else None

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, EditableFinder])
    monkeypatch.chdir(tmp_path)
    assert _module_file(_parser(), "edpkg.train") == str(package / "train.py")
    assert "edpkg" not in sys.modules


def _result(records: int, kind: str, zeros_from: str | None = None, error: str | None = None) -> dict:
    if error:
        return {"error": error}
    return {"records": [{"name": f"f{i}"} for i in range(records)], "zeros_from": zeros_from,
            "stop": {"kind": kind, "reason": "the script raised AssertionError", "where": ["nb.ipynb", 6, "<module>"]}}


@pytest.mark.parametrize("first, broken", [(_result(1, "error", "f"), True), (_result(1, "exit", "f"), True),
                                           (_result(1, "error"), False), (_result(1, "captured", "f"), False),
                                           (_result(1, "ended", "f"), False)])
def test_only_a_failure_after_zeros_is_run_again_with_real_values(first, broken):
    from xlalint.run.client import broken_by_zeros

    assert broken_by_zeros(first) is broken


@pytest.mark.parametrize("again, kept, why", [
    (_result(3, "ended"), "real values", None),
    (_result(1, "ended"), "real values", None),  # as far: the run with real values is the program's own
    (_result(0, "budget"), "zeros", "the run with real values captured less"),
    (_result(0, "", error="the run was killed"), "zeros", "the run was killed"),
])
def test_the_run_that_got_further_is_kept_and_the_rerun_said(again, kept, why):
    from xlalint.run.client import with_rerun

    first = _result(1, "error", "f")
    chosen = with_rerun(first, again)
    assert chosen["rerun"] == {"zeros_from": "f", "stop": first["stop"], "kept": kept, "why": why}
    assert chosen["records"] == (again if kept == "real values" else first)["records"]
