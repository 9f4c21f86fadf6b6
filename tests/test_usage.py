"""Usage errors are one line and exit 2; a run that could not check everything never reports success."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from helpers import REPO, no_tf_path, repo_env, run_without_tf, run_xlalint
from xlalint.cli.main import EXIT_READER_GONE, _check_parser, _verify_alone, main

MODEL = ("import tensorflow as tf\n\n\n@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])\n"
         "def f(x):\n    return x\n")


def _usage_error(done, message: str) -> None:
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"xlalint: error: {message}"]


@pytest.mark.parametrize("flags, message", [
    (["--timeout", "-1"], "argument --timeout: '-1' is not a positive number of seconds"),
    (["--timeout", "0"], "argument --timeout: '0' is not a positive number of seconds"),
    (["--timeout", "nan"], "argument --timeout: 'nan' is not a positive number of seconds"),
    (["--timeout", "inf"], "argument --timeout: 'inf' is not a positive number of seconds"),
    (["--jobs", "0"], "argument --jobs/-j: '0' is not a positive whole number"),
    (["-j", "-2"], "argument --jobs/-j: '-2' is not a positive whole number"),
    (["--max-memory", "8G"], "argument --max-memory: '8G' is not a number of MB (0: no limit)"),
    (["--max-memory", "-1"], "argument --max-memory: '-1' is not a number of MB (0: no limit)"),
    (["--cache-max-mb", "1.5"], "argument --cache-max-mb: '1.5' is not a number of MB (0: no limit)"),
    (["--shard", "0/3"], "argument --shard: '0/3' is not K/N: shard K of N, 1 <= K <= N (e.g. 2/4)"),
    (["--shard", "4/3"], "argument --shard: '4/3' is not K/N: shard K of N, 1 <= K <= N (e.g. 2/4)"),
    (["--shard", "2"], "argument --shard: '2' is not K/N: shard K of N, 1 <= K <= N (e.g. 2/4)"),
    (["--shard", "1/0"], "argument --shard: '1/0' is not K/N: shard K of N, 1 <= K <= N (e.g. 2/4)"),
    (["--verify=m.py"], "argument --verify: invalid choice: 'm.py' (choose from 'auto', 'cpu', 'gpu')"),
])
def test_bad_flag_values_are_one_line_usage_errors(tmp_path, flags, message):
    _usage_error(run_without_tf(*flags, "m.py", cwd=tmp_path), message)


@pytest.mark.parametrize("content, message", [
    (None, "missing.toml: cannot read it: No such file or directory"),
    ("[project]\nname = 'demo'\n", "missing.toml: no [tool.xlalint] table"),
    ("[tool]\nxlalint = 5\n", "missing.toml [tool.xlalint]: must be a table, not int"),
    ("tool = 5\n", "missing.toml: no [tool.xlalint] table"),
    ("[tool.xlalint\n", "missing.toml: not valid TOML: Expected ']' at the end of a table declaration "
                        "(at line 1, column 14)"),
])
def test_a_config_given_by_flag_must_hold_the_table(tmp_path, content, message):
    if content is not None:
        (tmp_path / "missing.toml").write_text(content)
    _usage_error(run_without_tf("--config", "missing.toml", "m.py", cwd=tmp_path), message)


@pytest.mark.parametrize("argv, verify, paths", [
    (["--verify", "m.py"], "auto", ["m.py"]),
    (["a.py", "--verify", "b.py", "c.py::f"], "auto", ["a.py", "b.py", "c.py::f"]),
    (["m.py", "--verify"], "auto", ["m.py"]),
    (["--verify", "gpu", "m.py"], "gpu", ["m.py"]),
    (["--verify=cpu", "m.py"], "cpu", ["m.py"]),
    (["m.py"], None, ["m.py"]),
])
def test_verify_takes_a_device_or_leaves_the_path_alone(argv, verify, paths):
    args = _check_parser().parse_intermixed_args(_verify_alone(argv))
    assert (args.verify, args.paths) == (verify, paths)


def test_verify_followed_by_a_file_checks_that_file(tmp_path):
    done = run_without_tf("--verify", "gone.py", "--format", "json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert done.returncode == 2 and [e["path"] for e in report["errors"]] == ["gone.py"]


@pytest.mark.tf
def test_sarif_is_no_success_when_tensorflow_cannot_be_imported(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    blocker = tmp_path / "no_tf"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['tensorflow'] = None\n")
    done = run_xlalint(str(tmp_path / "model.py"), "--no-cache", "--format", "sarif",
                       env={"PYTHONPATH": str(blocker)})
    [invocation] = json.loads(done.stdout)["runs"][0]["invocations"]
    assert done.returncode == 2 and invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "TensorFlow is not installed" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("model.py")


def test_clean_run_is_a_success_in_sarif(tmp_path):
    done = run_without_tf(str(REPO / "fixtures/clean_and_untraceable.py"), "--static", "--format", "sarif")
    [invocation] = json.loads(done.stdout)["runs"][0]["invocations"]
    assert done.returncode == 0, done.stderr
    assert invocation == {"executionSuccessful": True, "toolExecutionNotifications": []}


@pytest.mark.parametrize("affinity", [True, False], ids=["affinity-mask", "no-affinity-mask"])
def test_jobs_default_to_the_usable_cores(monkeypatch, affinity):
    """One tracing worker per core this process may run on: its affinity mask where the system has
    one (Linux), else the machine's core count."""
    from xlalint.settings import table as settings

    if affinity:
        monkeypatch.setattr(settings.os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
        expected = 3
    else:
        monkeypatch.delattr(settings.os, "sched_getaffinity", raising=False)
        monkeypatch.setattr(settings.os, "cpu_count", lambda: 7)
        expected = 7
    assert settings.usable_cores() == expected


def test_the_jobs_setting_defaults_to_the_usable_cores():
    """Neither flag nor config: a run traces with one worker per core this process may run on, as
    ``--help`` says (counted here from the system, not by xlalint)."""
    from xlalint.settings import table as settings

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert _check_parser().parse_args(["x.py"]).jobs is None  # unset: the setting's default applies
    assert settings.options(settings.merge({"jobs": None}, {})).jobs == usable
    assert settings.Options().jobs == usable
    assert f"may run on (default: {usable};" in " ".join(_check_parser().format_help().split())


def test_a_report_piped_to_a_reader_that_leaves_ends_quietly():
    """``xlalint ... | head``: the reader closes the pipe after a few bytes; no traceback, the exit a shell
    shows for SIGPIPE."""
    run = subprocess.Popen([sys.executable, "-m", "xlalint", "--static", "rules", "fixtures", "--format", "json"],
                           cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=repo_env({"PYTHONPATH": no_tf_path()}))
    assert run.stdout.read(10)
    run.stdout.close()  # as head does once it has its lines
    err = run.stderr.read().decode()
    assert run.wait(timeout=300) == EXIT_READER_GONE and "Traceback" not in err, err


def test_the_command_line_leaves_sigpipe_as_python_sets_it(tmp_path, capsys):
    """Ignored: a write to a server that died is a BrokenPipeError xlalint handles, never the end of the
    process that called ``main`` (a test process, a pre-commit hook's)."""
    before = signal.getsignal(signal.SIGPIPE)
    (tmp_path / "m.py").write_text(MODEL)
    main(["--static", str(tmp_path / "m.py")])
    assert signal.getsignal(signal.SIGPIPE) == before == signal.SIG_IGN
