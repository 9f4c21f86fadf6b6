"""Where Python would find a module, searched folder by folder without importing anything: a package's
``__init__`` is user code, which runs only in the child that runs the user's script."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.machinery import ModuleSpec, PathFinder


def specs_on_the_way(module: str, path: list[str]) -> Iterator[ModuleSpec]:
    """The spec of each package on the way to ``module`` (``a``, ``a.b`` for ``a.b.c``) and of the module
    itself, searched on ``path`` part by part; stops at the first part not found (none for a name with an
    empty part, which Python refuses)."""
    if not all(module.split(".")):
        return
    for part in module.split("."):
        spec = PathFinder.find_spec(part, path)
        if spec is None:
            return
        yield spec
        path = list(spec.submodule_search_locations or [])


def spec_without_importing(module: str, path: list[str]) -> ModuleSpec | None:
    """The module's spec found on ``path`` (no parent package imported), or None."""
    specs = list(specs_on_the_way(module, path))
    return specs[-1] if len(specs) == module.count(".") + 1 else None
