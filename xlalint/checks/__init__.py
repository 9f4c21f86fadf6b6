"""The rule catalogue: one module per rule code (``xlaNNN_name.py``), each with its ``RULE``.

A graph rule's ``RULE.check`` is a pure function of an ``OpGraph`` and a ``Context``; a source
rule's ``RULE.check_source`` reads a file's libcst index (``xlalint.source.index``) and is called by
the libcst pass; the other stages' hooks are called where what they read is known (docs/architecture.md,
"Rule hooks").
"""

from __future__ import annotations

import importlib

from xlalint.checks.base import (STAGES, CapturedContext, Context, EntryContext, Fix, Hit, NodeEdit, Pending, Rule,
                                 SelectedContext, SourceContext)
from xlalint.core.results import SEVERITIES
from xlalint.rule_codes import rule_modules

# Codes never change meaning; a new rule takes the next free code of its range.
CODE_RANGES = {
    "XLA0xx": "ops and dtypes the compiler has no kernel for",
    "XLA1xx": "shapes: compile-time constants, dynamic sizes, recompilation",
    "XLA2xx": "results that differ under XLA without an error",
    "XLA3xx": "framework decisions (Keras, TensorFlow) that keep XLA off",
    "XLA4xx": "source and configuration (API names, flags, jit_compile offers)",
    "XLA8xx": "suppression comments",
    "XLA9xx": "disagreements with the compiler found by --verify",
}


def _load_rules() -> dict[str, Rule]:
    """Every rule module of this package (``rule_codes.rule_modules``), sorted by code; a module's name
    must carry its code."""
    rules: dict[str, Rule] = {}
    for code, name in rule_modules():
        rule = importlib.import_module(f"{__name__}.{name}").RULE
        if rule.code != code or rule.code in rules:
            raise ImportError(f"rule module {name} defines {rule.code}: one module per code, named after it")
        if rule.stage not in STAGES or rule.severity not in SEVERITIES:
            raise ImportError(f"rule {rule.code}: stage {rule.stage!r} or severity {rule.severity!r} is not known")
        if getattr(rule, STAGES[rule.stage]) is None:
            raise ImportError(f"rule {rule.code}: a {rule.stage} rule needs its {STAGES[rule.stage]} hook")
        rules[rule.code] = rule
    return dict(sorted(rules.items()))


RULES: dict[str, Rule] = _load_rules()


def hooks(name: str, stage: str | None = None) -> list:
    """Every rule's hook ``name`` ("check_source", "check_text", "check_entry", "check_selected",
    "check_captured"), in code order; with ``stage``, only the hooks of rules of that stage."""
    return [getattr(rule, name) for rule in RULES.values()
            if getattr(rule, name) is not None and stage in (None, rule.stage)]


def fix_of(kind: str) -> Fix:
    """The fix of that kind (a finding's ``fix.kind``); KeyError for a kind no rule has."""
    return {rule.fix.kind: rule.fix for rule in RULES.values() if rule.fix}[kind]


def run_checks(graph, ctx: Context, codes=None) -> list[Hit]:
    """Hits of every graph rule (or of those in ``codes``), in code order."""
    wanted = set(codes) if codes is not None else set(RULES)
    return [hit for code, rule in RULES.items() if code in wanted and rule.check for hit in rule.check(graph, ctx)]


__all__ = ["CODE_RANGES", "CapturedContext", "Context", "EntryContext", "Fix", "Hit", "NodeEdit", "Pending", "Rule",
           "RULES", "SelectedContext", "SourceContext", "fix_of", "hooks", "run_checks"]
