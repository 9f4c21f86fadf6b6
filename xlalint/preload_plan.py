"""Which optional libraries a server imports before it forks: those the checked files (or run scripts) import.

Keras and TensorFlow are always imported by the server. A few other libraries take seconds to
import and are imported by most files that use them at all; importing one once in the server,
instead of once in each file's forked child, is worth it only when it is installed and at least
one checked file imports it. Imports are read with ``ast``, without running anything.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from collections.abc import Iterator

from xlalint.files import parse_python, read_source
from xlalint.module_files import specs_on_the_way

OPTIONAL = ("tf_keras", "tensorflow_probability", "transformers")
MAX_LOCAL_MODULES = 100  # files read for a run script (itself and its local modules); past it, nothing is preloaded


def _imports(tree: ast.Module) -> Iterator[tuple[int, str, list[str]]]:
    """``(level, module, names)`` of each import statement at any depth: ``import a.b`` is ``(0, "a.b", [])``,
    ``from ..a import b, c`` is ``(2, "a", ["b", "c"])``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((0, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or "", [alias.name for alias in node.names]


def _roots(tree: ast.Module) -> set[str]:
    return {module.partition(".")[0] for level, module, _ in _imports(tree) if module and not level}


def imported_roots(source: str) -> set[str]:
    """The top-level packages a module's ``import`` statements name, at any depth; none if it does not parse."""
    tree = parse_python(source)[0]
    return _roots(tree) if tree else set()


def preloads(paths: list[str], libraries: tuple[str, ...] = OPTIONAL) -> list[str]:
    """The ``libraries``, installed here, that at least one of ``paths`` imports."""
    wanted: set[str] = set()
    for path in paths:
        source, unreadable = read_source(path)  # a notebook: its code cells; a SavedModel: unreadable
        if not unreadable and any(name in source for name in libraries):  # most files: no parse
            wanted |= imported_roots(source) & set(libraries)
        if wanted == set(libraries):
            break
    return _installed(libraries, wanted)


def _installed(libraries: tuple[str, ...], wanted: set[str]) -> list[str]:
    """The ``libraries`` in ``wanted`` that are installed here, in the order of ``libraries``."""
    return [name for name in libraries if name in wanted and importlib.util.find_spec(name) is not None]


def sets_environment(tree: ast.Module) -> bool:
    """Whether a module sets an environment variable itself (``os.environ[...] = ...``, ``update``,
    ``setdefault``, ``putenv``): perhaps for a library it imports, which reads it at its import."""
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


def _local_files(level: int, module: str, names: list[str], importer: str, roots: list[str]) -> Iterator[str]:
    """The files under ``roots`` (or, for a relative import, the importer's package) that an import
    statement runs: each package's ``__init__`` on the way, the module, and the names that are modules."""
    if level:
        folder = os.path.dirname(importer)
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        roots = [folder]
    targets = [f"{module}.{name}" if module else name for name in names if name != "*"] or [module]
    for target in targets:
        for spec in specs_on_the_way(target, roots):
            if spec.origin and spec.origin.endswith(".py"):
                yield spec.origin


def _package_inits(script: str) -> Iterator[str]:
    """The ``__init__.py`` of each package around ``script``: ``run -m pkg.train`` runs them first."""
    folder = os.path.dirname(os.path.abspath(script))
    while os.path.isfile(init := os.path.join(folder, "__init__.py")) and init != script:
        yield init
        folder = os.path.dirname(folder)


def _run_scan(script: str, libraries: tuple[str, ...]) -> tuple[set[str], bool]:
    """``(the libraries the script and its local modules import, whether any of them sets environment
    variables)``. Local modules are those Python finds next to the script or in the working directory
    (where ``-m`` finds them), at any depth, and the packages around the script (which ``-m`` runs first),
    each file read once; past ``MAX_LOCAL_MODULES`` files (the
    script's included) the scan stops, and counts as importing every library and setting variables."""
    roots = list(dict.fromkeys([os.path.dirname(os.path.abspath(script)), os.getcwd()]))
    pending, seen = [os.path.abspath(script), *_package_inits(script)], set()
    imported: set[str] = set()
    sets = False
    while pending:
        path = os.path.realpath(pending.pop())
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_LOCAL_MODULES:
            return set(libraries), True  # what the files not read import is not known
        source, unreadable = read_source(path)  # a notebook: its code cells
        tree = None if unreadable else parse_python(source, path)[0]
        if tree is None:  # Python cannot import it either
            continue
        imported |= _roots(tree) & set(libraries)
        sets = sets or sets_environment(tree)
        pending += [file for statement in _imports(tree) for file in _local_files(*statement, path, roots)]
    return imported, sets


def run_preloads(paths: list[str], libraries: tuple[str, ...] = OPTIONAL) -> list[str]:
    """What ``xlalint run``'s server imports before it forks: the ``libraries`` the scripts (or their local
    modules) import, but none that a script is run with if it or one of its local modules sets environment
    variables (perhaps for that library, which must see them when it is imported)."""
    wanted: set[str] = set()
    late: set[str] = set()
    for path in paths:
        imported, sets = _run_scan(path, libraries)
        (late if sets else wanted).update(imported)
    return _installed(libraries, wanted - late)
