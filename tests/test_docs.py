"""The docs say what the code does: rule pages complete and generated, README commands real."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))

import gen_rule_docs  # noqa: E402
from xlalint.checks import CODE_RANGES, RULES  # noqa: E402

SECTIONS = ["## What it does", "## Why it matters", "## Example", "## Use instead",
            "## What the compiler does", "## Fix safety", "## Static mode"]


def test_every_rule_readme_has_the_standard_sections():
    for code, rule in RULES.items():
        readme = REPO / "rules" / code / "README.md"
        if readme.exists() or rule.check:
            text = readme.read_text()
            assert text.startswith(f"# {code} `{rule.name}` ({rule.severity})"), code
            assert all(section in text for section in SECTIONS), code


def test_every_code_lies_in_a_documented_range():
    assert all(f"{code[:4]}xx" in CODE_RANGES for code in RULES), sorted(RULES)


def test_generated_rule_page_is_up_to_date():
    assert (REPO / "docs/rules.md").read_text() == gen_rule_docs.render(), "run python tools/gen_rule_docs.py"


def test_readme_opens_with_install_and_test_commands():
    readme = (REPO / "README.md").read_text().split("```")[1]
    commands = [line for line in readme.splitlines()[1:] if line.strip()]
    assert commands[0].startswith("pip install -e '.[tf]' && xlalint examples/")
    assert Path(REPO / commands[0].split("xlalint ")[1].split()[0]).is_file()
    assert commands[1].startswith("pip install -e '.[tf,test]' && python -m pytest")
    assert "python -m pytest" in (REPO / ".ci/run").read_text()
