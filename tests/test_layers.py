"""The package's layers, read from the imports with ``ast`` (no TensorFlow, nothing imported).

A module may import from its own layer and the layers below it, never from one above:
``docs/architecture.md`` draws the same table. Imports under ``if TYPE_CHECKING:`` are types only,
and ``import xlalint`` (the package face, whose API is loaded lazily) is not a layer. Module names
written as strings (the children xlalint starts with ``python -m``, the code strings of tests and
benches) must name a module that exists.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from helpers import REPO

PACKAGE = REPO / "xlalint"
# Lowest first. Each name is a folder of xlalint/ or a module of its face.
LAYERS = [
    {"version", "rule_codes", "core", "process", "data"},
    {"inputs"},
    {"analyses", "source"},
    {"checks"},
    {"autocluster", "fixes"},
    {"backend"},
    {"tracing", "ci", "settings"},
    {"engine", "run"},
    {"report"},
    {"cli", "doctor", "lsp"},
    {"api", "__init__", "__main__"},
]
LAYER = {name: rank for rank, names in enumerate(LAYERS) for name in names}
FACE = {"__init__", "__main__", "api", "version", "rule_codes"}
MODULE_NAME = re.compile(r"\bxlalint(?:\.\w+)+")
FILE_SUFFIXES = {"json", "sarif", "txt", "log", "toml", "yaml", "yml", "md"}  # "xlalint.sarif" is a file
CODE_IMPORT = re.compile(r"\b(?:from|import)\s+(xlalint(?:\.\w+)*)")


def _part(module: str) -> str | None:
    """The layer name of a module ``xlalint.X...``: its folder, or its face module; None for ``xlalint``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return inside


def _imports(text: str) -> list[tuple[int, str]]:
    """``(line, module)`` of each xlalint import of a module's text, type-only ones left out."""
    tree = ast.parse(text)
    types_only, found = _type_checking_blocks(tree), []
    for node in ast.walk(tree):
        if id(node) in types_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "xlalint":
                found += [(node.lineno, f"xlalint.{a.name}") for a in node.names if a.name != "__version__"]
            elif node.module.startswith("xlalint."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("xlalint.")]
    return found


def upward_imports(text: str, module_name: str) -> list[str]:
    """Each import of a module of xlalint/ (its text and dotted name) that reaches a layer above its own."""
    own = _part(module_name) or "__init__"
    out = []
    for line, module in _imports(text):
        target = _part(module)
        if target is None or target == own:
            continue
        if target not in LAYER:
            out.append(f"line {line}: {module} is in no layer")
        elif LAYER[target] > LAYER[own]:
            out.append(f"line {line}: {module} (layer {LAYER[target]}) from layer {LAYER[own]}")
    return out


def _resolves(module: str) -> bool:
    """Whether ``module`` (dotted, from xlalint) is a module or package of this repository: looked up
    as files, nothing imported."""
    base = REPO.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """``(line, string)`` of the string constants of a file that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def named_modules(path: Path) -> list[tuple[int, str]]:
    """Module names a file writes as strings: a whole string that is a dotted xlalint name, or the
    modules of ``import``/``from`` statements inside a string of code."""
    out = []
    for line, text in _code_strings(path):
        if MODULE_NAME.fullmatch(text) and text.rpartition(".")[2] not in FILE_SUFFIXES:
            out.append((line, text))
        out += [(line, m) for m in CODE_IMPORT.findall(text) if m != "xlalint"]
    return out


def test_the_top_level_holds_only_the_face():
    assert {p.stem for p in PACKAGE.glob("*.py")} == FACE


def test_every_folder_of_the_package_has_a_layer():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - LAYER.keys() == set()


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_runs_upward(path):
    assert upward_imports(path.read_text(encoding="utf-8"), _module_of(path)) == []


def test_module_names_written_as_strings_resolve():
    unresolved = [f"{p.relative_to(REPO)}:{line}: {name}"
                  for folder in ("xlalint", "tests", "bench", "tools") for p in sorted((REPO / folder).rglob("*.py"))
                  if p.name != "test_layers.py" for line, name in named_modules(p) if not _resolves(name)]
    assert unresolved == []


# What bench/ and tools/ may import besides the public API (``xlalint``, ``xlalint.api``): the command line,
# the records and settings, the rule registry and emitters, and the stages the speed benches time one by one
# (docs/architecture.md, "Benches and tools").
BENCH_SURFACE = {
    "xlalint", "xlalint.api", "xlalint.cli.main", "xlalint.core.gc_pause", "xlalint.core.opgraph",
    "xlalint.core.results", "xlalint.core.specs", "xlalint.core.support", "xlalint.core.tables",
    "xlalint.settings.table", "xlalint.checks", "xlalint.report", "xlalint.analyses.data_dependent",
    "xlalint.autocluster", "xlalint.source.suppressions",
    "xlalint.engine.analysis", "xlalint.engine.entries", "xlalint.engine.selection", "xlalint.engine.static",
    "xlalint.tracing.workers", "xlalint.process.result_file", "xlalint.run.client", "xlalint.run.report",
    "xlalint.backend", "xlalint.backend.discover", "xlalint.backend.graph_export", "xlalint.backend.keras_sites",
    "xlalint.backend.verify.compare", "xlalint.backend.op_stack",
    "xlalint.checks.xla001_unsupported_op",  # tools/gen_api_table.py: ALWAYS_COMPILED
}


def test_benches_and_tools_import_only_their_documented_surface():
    outside = [f"{p.relative_to(REPO)}:{line}: {module}" for folder in ("bench", "tools")
               for p in sorted((REPO / folder).rglob("*.py"))
               for line, module in _imports(p.read_text(encoding="utf-8")) if module not in BENCH_SURFACE]
    assert outside == []


def test_the_checks_catch_what_they_are_for(tmp_path):
    """The instruments themselves: an upward import, a type-only one, and a string naming a missing module."""
    rule = ("from typing import TYPE_CHECKING\nfrom xlalint.engine.analysis import analyze\n"
            "if TYPE_CHECKING:\n    from xlalint.cli.main import main\nfrom xlalint.core import wire\n")
    assert upward_imports(rule, "xlalint.checks.xla999_probe") == [
        "line 2: xlalint.engine.analysis (layer 7) from layer 3"]
    script = tmp_path / "child.py"
    script.write_text('NAME = "xlalint.backend.no_such_child"\nCODE = "from xlalint.core.wire import FORMAT"\n'
                      'OLD = "import xlalint.worker_client"\n')
    assert [name for _, name in named_modules(script) if not _resolves(name)] == [
        "xlalint.backend.no_such_child", "xlalint.worker_client"]
