"""Every rule's code, read from the names of the rule modules (``xlalint/checks/xlaNNN_name.py``)
without importing them: ``--select`` and ``--ignore`` are resolved before a run, while the tracing
servers start, and the rules (libcst) are imported only for the analysis."""

from __future__ import annotations

import functools
import pkgutil
import re
from collections.abc import Sequence
from pathlib import Path

RULE_MODULE = re.compile(r"xla(\d{3})_\w+$")  # xlalint.checks loads exactly these, each defining its code


@functools.cache
def rule_modules() -> tuple[tuple[str, str], ...]:
    """``(code, module name)`` of each rule module, sorted by code; the folder is read once per process
    (``xlalint.checks`` imports these modules)."""
    folder = str(Path(__file__).resolve().parent / "checks")
    return tuple(sorted((f"XLA{match.group(1)}", info.name) for info in pkgutil.iter_modules([folder])
                        if (match := RULE_MODULE.match(info.name))))


def rule_codes() -> tuple[str, ...]:
    """The codes of the rule modules, sorted (the order of ``xlalint.checks.RULES``)."""
    return tuple(code for code, _ in rule_modules())


def resolve_codes(select: Sequence[str] | None, ignore: Sequence[str] = ()) -> tuple[str, ...]:
    """Rule codes matching any ``select`` prefix (all when None) and no ``ignore`` prefix."""
    codes = rule_codes()
    for prefix in [*(select or []), *ignore]:
        if not any(code.startswith(prefix.upper()) for code in codes):
            raise ValueError(f"{prefix!r} matches no rule code (known: {', '.join(codes)})")

    def matches(code, prefixes):
        return any(code.startswith(p.upper()) for p in prefixes)

    return tuple(c for c in codes if (select is None or matches(c, select)) and not matches(c, ignore))
