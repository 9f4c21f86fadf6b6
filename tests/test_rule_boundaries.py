"""One rule, one module: outside ``xlalint/checks/`` no module imports a rule module or writes a rule code.

The passes reach rules through the registry's hooks; data tables and prose (docstrings, comments)
may name codes.
"""

from __future__ import annotations

import ast
import re

from helpers import REPO

PACKAGE = REPO / "xlalint"
RULE_MODULE = re.compile(r"xla\d{3}_\w+$")
CODE = re.compile(r"XLA\d{3}")


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return {id(n.body[0].value) for n in nodes if n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant) and isinstance(n.body[0].value.value, str)}


def _violations(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs, found = _docstrings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found += [f"line {node.lineno}: imports {n}" for n in names if RULE_MODULE.search(n.split(".")[-1])
                      and n.startswith("xlalint.checks.")]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names
                      if a.name.startswith("xlalint.checks.") and RULE_MODULE.search(a.name.split(".")[-1])]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and CODE.search(node.value):
            found.append(f"line {node.lineno}: writes the rule code {CODE.search(node.value).group()}")
    return found


def test_no_module_outside_checks_imports_a_rule_module_or_writes_a_rule_code():
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if PACKAGE / "checks" not in p.parents]
    problems = {str(p.relative_to(REPO)): v for p in outside if (v := _violations(p))}
    assert not problems, ("rule logic belongs in its module under xlalint/checks/, reached through the "
                          f"registry's hooks (docs/architecture.md): {problems}")


def test_the_check_sees_what_it_forbids(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""XLA001 in prose is fine."""\nfrom xlalint.checks import xla403_enable_jit_compile\n'
                   'import xlalint.checks.xla801_unused_suppression\nCODE = "XLA901"  # XLA902 in a comment is fine\n')
    assert _violations(bad) == ["line 2: imports xlalint.checks.xla403_enable_jit_compile",
                                "line 3: imports xlalint.checks.xla801_unused_suppression",
                                "line 4: writes the rule code XLA901"]


def test_the_models_rules_read_know_no_rule():
    """``source/`` (libcst) and ``analyses/`` (op graphs) sit below ``checks/``: they never import it."""
    layers = [p for folder in ("source", "analyses") for p in sorted((PACKAGE / folder).rglob("*.py"))]
    importing = [str(p.relative_to(REPO)) for p in layers for node in ast.walk(ast.parse(p.read_text()))
                 if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xlalint.checks")
                 or isinstance(node, ast.Import) and any(a.name.startswith("xlalint.checks") for a in node.names)]
    assert layers and not importing, importing
