"""Where Python would find a module, searched folder by folder without importing anything: a package's
``__init__`` is user code, which runs only in the child that runs the user's script."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from importlib.machinery import ModuleSpec, PathFinder


def specs_on_the_way(module: str, path: list[str], installed: bool = False) -> Iterator[ModuleSpec]:
    """The spec of each package on the way to ``module`` (``a``, ``a.b`` for ``a.b.c``) and of the module
    itself, searched on ``path`` part by part; stops at the first part not found (none for a name with an
    empty part, which Python refuses). With ``installed``, a first part that no folder on ``path`` holds is
    also asked of the interpreter's other finders (an editable install's), which import nothing for a
    top-level name; the parts below it are still searched in its folders."""
    if not all(module.split(".")):
        return
    for depth, part in enumerate(module.split(".")):
        spec = PathFinder.find_spec(part, path)
        if spec is None and installed and not depth:
            spec = importlib.util.find_spec(part)
        if spec is None:
            return
        yield spec
        path = list(spec.submodule_search_locations or [])


def spec_without_importing(module: str, path: list[str]) -> ModuleSpec | None:
    """The module's spec found on ``path``, or for a top-level package no folder on it holds, where the
    interpreter finds that package (``specs_on_the_way``); no package imported; None if not found."""
    specs = list(specs_on_the_way(module, path, installed=True))
    return specs[-1] if len(specs) == module.count(".") + 1 else None


def module_file(module: str, folder: str) -> str | None:
    """The file ``python -m MODULE`` run from ``folder`` runs, searched as Python does (``folder`` first, then
    ``sys.path``) without importing anything; a package runs its ``__main__.py``. None where it is not found
    (a finder's own error included), also for a package without ``__main__.py``, which Python cannot run."""
    try:
        spec = spec_without_importing(module, [folder, *sys.path])
    except (ImportError, ValueError):  # a finder's own error; a module imported here without a spec
        return None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    if spec.submodule_search_locations:  # a package runs its __main__
        main = os.path.join(os.path.dirname(spec.origin), "__main__.py")
        return main if os.path.isfile(main) else None
    return spec.origin

