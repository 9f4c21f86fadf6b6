"""[tool.xlalint] in pyproject.toml: found upward, validated, overridden by flags."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from helpers import REPO, run_json, run_without_tf, run_xlalint
import xlalint
from xlalint.settings.config import ConfigError, find_config, load_config
from xlalint.settings.table import BY_KEY, SETTINGS, Options, merge


def _project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n\n[tool.xlalint]\n{table}\n")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(REPO / "fixtures/multi_blocker.py", src / "blockers.py")
    shutil.copy(REPO / "fixtures/clean_and_untraceable.py", src / "helpers.py")
    return src


def test_config_is_found_upward_and_validated(tmp_path):
    src = _project(tmp_path, 'device = "cpu"\ntimeout = 30\nmax-memory = 4096\nselect = ["XLA0"]\ncache-max-mb = 64')
    config = load_config(find_config([str(src / "blockers.py")]))
    assert config.values == {"device": "cpu", "timeout": 30.0, "max_memory": 4096, "select": ["XLA0"],
                             "cache_max_mb": 64}


@pytest.mark.parametrize("table, message", [
    ('devise = "cpu"', "unknown key `devise`"),
    ('device = "fpga"', "`device` must be one of cpu, gpu, tpu"),
    ("timeout = -1", "`timeout` must be a positive number"),
    ("timeout = nan", "`timeout` must be a positive number"),
    ("timeout = inf", "`timeout` must be a positive number"),
    ('timeout = "30"', "`timeout` must be a positive number"),
    ("device = 5", "`device` must be one of cpu, gpu, tpu, not 5"),
    ('mode = ["jit"]', "`mode` must be one of auto, jit, autocluster, not ['jit']"),
    ("cache-max-mb = -1", "`cache-max-mb` must be a number of MB"),
    ("cache-max-mb = true", "`cache-max-mb` must be a number of MB"),
    ("per-file-ignores = 3", "`per-file-ignores` must be a table"),
    ("ignore = [1]", "`ignore` must be a list of strings"),
    ('max-memory = "8G"', "`max-memory` must be a number of MB"),
    ('select = "XLA001"', "`select` must be a list of strings"),
    ('entries = ["train.py"]', 'must look like "file.py::name"'),
    ('specs = {"a.py::f" = ["float32[x]"]}', "specs.a.py::f"),
    ('strict = "yes"', "`strict` must be true or false"),
    ('run = "train.py"', '`run` must be a list of "SCRIPT ARGS..." or "-m MODULE ARGS..."'),
    ('run = ["train.py \'--name"]', "`run` must be a list of commands, not \"train.py '--name\": No closing quotation"),
    ('run = ["--epochs 1 train.py"]', "`run` must be a list of \"SCRIPT ARGS...\" or \"-m MODULE ARGS...\", not "
     "'--epochs 1 train.py'"),
    ('run = ["-m"]', "`run` must be a list of"),
])
def test_bad_config_names_the_key(tmp_path, table, message):
    src = _project(tmp_path, table)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_config(find_config([str(src)]))
    done = run_without_tf(str(src), cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.tf
def test_config_entries_specs_ignores_and_flag_override(tmp_path):
    src = _project(tmp_path, "\n".join([
        'device = "cpu"',
        'entries = ["src/helpers.py::plain_helper"]',
        'specs = {"src/helpers.py::plain_helper" = ["float32[4,6]", "int32[]"]}',
        'per-file-ignores = {"src/blockers.py" = ["XLA001"]}',
    ]))
    report, code = run_json(cwd=tmp_path)  # no paths: the declared entries' files
    assert report["device"] == "cpu"
    assert [(f["entry"], f["code"]) for f in report["findings"] if f["severity"] != "info"] == [
        ("plain_helper", "XLA102")]
    report, _ = run_json(str(src), "--device", "gpu", cwd=tmp_path)
    assert report["device"] == "gpu"
    assert not [f for f in report["findings"] if f["path"].endswith("blockers.py")]  # per-file-ignores
    assert "plain_helper" in {f["entry"] for f in report["findings"]}
    report, _ = run_json(str(src), "--ignore", "XLA1", cwd=tmp_path)
    assert not [f for f in report["findings"] if f["code"].startswith("XLA1")]


def test_a_flag_wins_over_the_config_file_which_wins_over_the_default():
    values = merge({"timeout": 5.0, "device": None}, {"timeout": 30.0, "device": "cpu", "max_memory": 0})
    assert (values["timeout"], values["device"], values["max_memory"], values["mode"]) == (5.0, "cpu", 0, "auto")


def test_options_hold_every_setting_the_run_reads_by_its_name_and_default():
    """``Options`` is declared (for mypy) and frozen; the table is where a setting is written: they agree."""
    fields = {f.name for f in dataclasses.fields(Options)}
    folded = {"ignore", "entries", "specs", "run"}  # into select, into targets; the commands `xlalint run` runs
    assert fields == {s.name for s in SETTINGS} - folded | {"targets", "only_named", "root", "progress"}
    defaults = Options()
    assert [s.name for s in SETTINGS if s.name in fields - {"select"} and getattr(defaults, s.name) != s.default] == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        defaults.device = "cpu"


def test_the_python_api_checks_its_settings_as_the_config_file_does():
    with pytest.raises(ValueError, match="mode must be one of auto, jit, autocluster, not 'fast'"):
        xlalint.check(lambda x: x, "float32[2]", mode="fast")  # before anything is traced
    with pytest.raises(ValueError, match="select must be a list of strings, not 'XLA001'"):
        xlalint.check(lambda x: x, "float32[2]", select="XLA001")


def test_the_readme_names_every_config_key():
    readme = (REPO / "README.md").read_text()
    assert [key for key in BY_KEY if f"`{key}`" not in readme] == []


def test_run_commands_are_split_as_a_shell_splits_them(tmp_path):
    from xlalint.run.listed import listed_command

    _project(tmp_path, "run = [\"examples/train.py --epochs 1 --name 'a b'\", \"-m pkg.train --lr 0.1\"]")
    config = load_config(find_config([str(tmp_path)]))
    assert [listed_command(c) for c in config.values["run"]] == [
        ("examples/train.py", None, ["--epochs", "1", "--name", "a b"]), (None, "pkg.train", ["--lr", "0.1"])]


def test_run_without_a_script_and_without_listed_commands_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # this checkout's xlalint, from another working directory
    _project(tmp_path, 'device = "cpu"')
    done = run_without_tf("run", cwd=tmp_path)
    assert done.returncode == 2 and "or list run commands under `run` in [tool.xlalint]" in done.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.xlalint]\nrun = ["missing.py --epochs 1"]\n')
    done = run_without_tf("run", cwd=tmp_path / "src")
    assert done.returncode == 2 and "run command 'missing.py --epochs 1': no such script: missing.py" in done.stderr
