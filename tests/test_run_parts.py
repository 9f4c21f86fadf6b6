"""The TensorFlow-free parts of `xlalint run`: the command line, the scratch mirror, the report."""

import json
import os

import pytest

from helpers import REPO, run_without_tf
from xlalint.report import EMITTERS
from xlalint.run_command import _parser, split_command
from xlalint.run_report import defined_tf_functions, run_report
from xlalint.run_scratch import make_scratch, remove_scratch
from xlalint.settings import Options


@pytest.mark.parametrize("argv, ours, theirs", [
    (["--format", "json", "train.py", "--epochs", "2"], ["--format", "json", "train.py"], ["--epochs", "2"]),
    (["-q", "--format=sarif", "train.py", "-q"], ["-q", "--format=sarif", "train.py"], ["-q"]),
    (["-m", "pkg.train", "--lr", "1"], ["-m", "pkg.train"], ["--lr", "1"]),
    (["--", "-odd.py", "x"], ["-odd.py"], ["x"]),
    (["--quiet"], ["--quiet"], []),
])
def test_options_before_the_script_are_ours_the_rest_the_scripts(argv, ours, theirs):
    assert split_command(argv, _parser()) == (ours, theirs)


def test_usage_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # this checkout's xlalint, from another working directory
    for args, message in [((), "give a SCRIPT or -m MODULE"), (("missing.py",), "no such script: missing.py"),
                          (("-m", "no_such_module_here"), "no module named 'no_such_module_here'")]:
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
    from xlalint.cli import _exit_code
    from xlalint.results import Entry, Finding, Report
    from xlalint.run_listed import together

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
    assert _exit_code(report) == 1 and _exit_code(first) == 0
    assert [(r["command"], r["stopped"]) for r in json.loads(EMITTERS["json"](report))["runs"]] == [
        ("train.py", "ended"), ("train.py --debug", "captured"), ("train.py --debug --epochs 2", "captured")]
    assert "run of `train.py --debug` stopped: the script captured" in EMITTERS["text"](report)
