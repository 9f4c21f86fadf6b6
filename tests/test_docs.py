"""The docs say what the code does: one rules/ folder per rule code, rule pages complete and generated,
README commands real."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from helpers import REPO

sys.path.insert(0, str(REPO / "tools"))

import gen_rule_docs  # noqa: E402
import xlalint.rule_codes as codes  # noqa: E402
from xlalint.checks import CODE_RANGES, RULES  # noqa: E402

RULE_FOLDERS = sorted(p for p in (REPO / "rules").iterdir() if p.is_dir())
SECTIONS = ["## What it does", "## Why it matters", "## Example", "## Use instead",
            "## What the compiler does", "## Fix safety", "## Static mode"]


def test_rule_codes_are_unique_and_match_rules_folders_one_to_one():
    modules = sorted(p.stem for p in (REPO / "xlalint" / "checks").glob("xla[0-9][0-9][0-9]_*.py"))
    codes = [importlib.import_module(f"xlalint.checks.{name}").RULE.code for name in modules]
    assert len(codes) == len(set(codes)), sorted(codes)
    assert [code.lower() for code in codes] == [name[:6] for name in modules]  # each module named after its code
    assert list(RULES) == sorted(codes)  # the registry: every module, in code order
    assert [p.name for p in RULE_FOLDERS] == list(RULES)


def test_the_codes_read_without_importing_the_rules_are_the_registrys_and_the_folder_is_read_once(monkeypatch):
    """``--select`` is resolved from the modules' names before the rules are imported: the same codes,
    in the same order, from one read of the folder shared with the registry."""
    assert codes.rule_codes() == tuple(RULES)

    def unread(*args, **kwargs):
        raise AssertionError("the rule folder was read again")

    monkeypatch.setattr(pkgutil, "iter_modules", unread)
    assert codes.rule_codes() == tuple(RULES)
    assert codes.resolve_codes(["XLA1"]) == tuple(code for code in RULES if code.startswith("XLA1"))


def test_every_rule_folder_has_examples_unless_only_verify_finds_it():
    # XLA9xx are xlalint's own bugs found by --verify: an example of one would be a bug, fixed once known.
    without = {p.name for p in RULE_FOLDERS if not (p / "bad.py").is_file()}
    assert without == {code for code in RULES if code.startswith("XLA9")}
    for rule_dir in RULE_FOLDERS:
        if rule_dir.name in without:
            assert "## Example\nNone: " in (rule_dir / "README.md").read_text(), f"{rule_dir.name}: say why"
        else:
            assert (rule_dir / "good.py").is_file(), f"{rule_dir.name}/good.py is missing"


def test_every_rule_readme_has_the_standard_sections():
    for code, rule in RULES.items():
        text = (REPO / "rules" / code / "README.md").read_text()
        assert text.startswith(f"# {code} `{rule.name}` ({rule.severity})"), code
        assert all(section in text for section in SECTIONS), code


def test_every_code_lies_in_a_documented_range():
    assert all(f"{code[:4]}xx" in CODE_RANGES for code in RULES), sorted(RULES)


def test_generated_rule_page_is_up_to_date():
    assert (REPO / "docs/rules.md").read_text() == gen_rule_docs.render(), "docs/rules.md is out of date: run python tools/regen.py --docs-only"


def test_readme_opens_with_install_and_test_commands():
    readme = (REPO / "README.md").read_text().split("```")[1]
    commands = [line for line in readme.splitlines()[1:] if line.strip()]
    assert commands[0].startswith("pip install -e '.[tf]' && xlalint examples/")
    assert Path(REPO / commands[0].split("xlalint ")[1].split()[0]).is_file()
    assert commands[1].startswith("pip install -e '.[tf,test]' && python -m pytest")
    assert "python -m pytest" in (REPO / ".ci/run").read_text()
