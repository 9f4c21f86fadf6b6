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

from xlalint.inputs.files import parse_python, read_source
from xlalint.inputs.module_files import specs_on_the_way

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
    """Whether a module sets an environment variable itself (``os.environ[...] = ...``, ``|=``, ``update``,
    ``setdefault``, ``putenv``, python-dotenv's ``load_dotenv``): perhaps for a library it imports, which
    reads it at its import."""
    return any(_writes_environ(node) or _loads_dotenv(node) for node in ast.walk(tree))


def _writes_environ(node: ast.AST) -> bool:
    target: ast.expr | None
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
        target = node.value
    elif isinstance(node, ast.AugAssign):
        target = node.target
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "putenv":
            return True
        target = node.func.value if node.func.attr in ("update", "setdefault", "pop", "clear") else None
    else:
        return False
    return (isinstance(target, ast.Attribute) and target.attr == "environ") or (
        isinstance(target, ast.Name) and target.id == "environ")


def _loads_dotenv(node: ast.AST) -> bool:
    """``from dotenv import load_dotenv`` (under any name it is called by), or ``dotenv.load_dotenv()``."""
    if isinstance(node, ast.ImportFrom):
        return node.module == "dotenv" and any(alias.name == "load_dotenv" for alias in node.names)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load_dotenv"


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


def _search_path(script: str, module: str | None, cwd: str) -> list[str]:
    """The folders Python searches first for the imports of a run from ``cwd``, in its order: ``cwd`` for
    ``-m MODULE`` (the module's own folder is not searched), else the script's folder; then ``PYTHONPATH``."""
    first = cwd if module else os.path.dirname(os.path.abspath(script))
    extra = os.environ.get("PYTHONPATH")
    # an empty entry is the working directory, as abspath("") makes it
    entries = [os.path.abspath(entry) for entry in extra.split(os.pathsep)] if extra else []
    return list(dict.fromkeys([first, *entries]))


def _package_inits(file: str, module: str) -> Iterator[str]:
    """The ``__init__.py`` that ``-m MODULE`` runs before ``file``: one for each package its name goes
    through (``a`` and ``a.b`` for ``a.b.c``), and the package's own when ``file`` is its ``__main__``."""
    packages = module.count(".") + (os.path.basename(file) == "__main__.py" and not module.endswith(".__main__"))
    folder = os.path.dirname(os.path.abspath(file))
    for _ in range(packages):
        if os.path.isfile(init := os.path.join(folder, "__init__.py")):  # none for a namespace package
            yield init
        folder = os.path.dirname(folder)


def run_files(script: str, module: str | None, cwd: str | None = None) -> dict[str, ast.Module] | None:
    """The files a run from ``cwd`` (default: this process's working directory) imports that Python finds on its
    first folders (``_search_path``), at any depth, the script's own first (and for ``-m`` the packages around the
    module, which run first), each parsed once; None past ``MAX_LOCAL_MODULES`` files (what the files not read
    import is not known)."""
    roots = _search_path(script, module, cwd or os.getcwd())
    pending, found = [os.path.abspath(script), *(_package_inits(script, module) if module else [])], {}
    seen: set[str] = set()
    while pending:
        path = os.path.realpath(pending.pop())
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_LOCAL_MODULES:
            return None
        source, unreadable = read_source(path)  # a notebook: its code cells
        tree = None if unreadable else parse_python(source, path)[0]
        if tree is None:  # Python cannot import it either
            continue
        found[path] = tree
        pending += [file for statement in _imports(tree) for file in _local_files(*statement, path, roots)]
    return found


def _run_scan(script: str, module: str | None, libraries: tuple[str, ...]) -> tuple[set[str], bool]:
    """``(the libraries the script and its local modules import, whether any of them sets environment
    variables)``; a run of too many files (``run_files``) counts as importing every library and setting
    variables."""
    files = run_files(script, module)
    if files is None:
        return set(libraries), True
    imported = {root for tree in files.values() for root in _roots(tree) & set(libraries)}
    return imported, any(sets_environment(tree) for tree in files.values())


def run_preloads(runs: list[tuple[str, str | None]], libraries: tuple[str, ...] = OPTIONAL) -> list[str]:
    """What ``xlalint run``'s server imports before it forks: the ``libraries`` the runs' files (each
    ``(file, MODULE)``, MODULE None for a script) or their local modules import, but none that a run
    imports if its file or one of its local modules sets environment variables (perhaps for that
    library, which must see them when it is imported)."""
    wanted: set[str] = set()
    late: set[str] = set()
    for file, module in runs:
        imported, sets = _run_scan(file, module, libraries)
        (late if sets else wanted).update(imported)
    return _installed(libraries, wanted - late)
