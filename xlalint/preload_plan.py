"""Which optional libraries a server imports before it forks: those the checked files (or run scripts) import.

Keras and TensorFlow are always imported by the server. A few other libraries take seconds to
import and are imported by most files that use them at all; importing one once in the server,
instead of once in each file's forked child, is worth it only when it is installed and at least
one checked file imports it. Imports are read with ``ast``, without running anything.
"""

from __future__ import annotations

import ast
import importlib.util

from xlalint.files import read_source

OPTIONAL = ("tf_keras", "tensorflow_probability", "transformers")


def imported_roots(source: str) -> set[str]:
    """The top-level packages a module's ``import`` statements name, at any depth; none if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.partition(".")[0])
    return roots


def preloads(paths: list[str], libraries: tuple[str, ...] = OPTIONAL) -> list[str]:
    """The ``libraries``, installed here, that at least one of ``paths`` imports."""
    wanted: set[str] = set()
    for path in paths:
        source, unreadable = read_source(path)  # a notebook: its code cells; a SavedModel: unreadable
        if not unreadable and any(name in source for name in libraries):  # most files: no parse
            wanted |= imported_roots(source) & set(libraries)
        if wanted == set(libraries):
            break
    return [name for name in libraries if name in wanted and importlib.util.find_spec(name) is not None]


def sets_environment(source: str) -> bool:
    """Whether a module sets an environment variable itself (``os.environ[...] = ...``, ``update``,
    ``setdefault``, ``putenv``): perhaps for a library it imports, which reads it at its import."""
    if "environ" not in source and "putenv" not in source:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return False
    for node in ast.walk(tree):
        target: ast.expr | None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "putenv":
                return True
            target = node.func.value if node.func.attr in ("update", "setdefault", "pop", "clear") else None
        else:
            continue
        if (isinstance(target, ast.Attribute) and target.attr == "environ") or (
                isinstance(target, ast.Name) and target.id == "environ"):
            return True
    return False


def run_preloads(paths: list[str], libraries: tuple[str, ...] = OPTIONAL) -> list[str]:
    """What ``xlalint run``'s server imports before it forks: the ``libraries`` the scripts import, but
    none that a script setting environment variables imports (it must see them when it imports it)."""
    late: set[str] = set()
    for path in paths:
        source, unreadable = read_source(path)
        if not unreadable and sets_environment(source):
            late |= imported_roots(source)
    return [name for name in preloads(paths, libraries) if name not in late]
