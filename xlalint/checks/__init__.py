"""The rule catalogue. Each rule is a pure function of an ``OpGraph`` and a ``Context``."""

from __future__ import annotations

from xlalint.checks import (
    constant_inputs,
    dynamic_output_shape,
    keras_layers,
    silent_results,
    unknown_dims,
    unsupported_dtype,
    unsupported_op,
)
from xlalint.checks.base import Context, Hit, Rule

# Codes never change meaning; a new rule takes the next free code of its range.
CODE_RANGES = {
    "XLA0xx": "ops and dtypes the compiler has no kernel for",
    "XLA1xx": "shapes: compile-time constants, dynamic sizes, recompilation",
    "XLA2xx": "results that differ under XLA without an error",
    "XLA3xx": "framework decisions (Keras) that keep XLA off",
    "XLA4xx": "source and configuration (API names, flags, jit_compile offers)",
    "XLA8xx": "suppression comments",
    "XLA9xx": "disagreements with the compiler found by --verify",
}

RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        unsupported_op.RULE,
        unsupported_dtype.RULE,
        constant_inputs.NON_CONSTANT,
        constant_inputs.VALUE_SPECIALIZED,
        constant_inputs.LOOP_SHAPE,
        dynamic_output_shape.RULE,
        dynamic_output_shape.BLOCKING,
        unknown_dims.RULE,
        silent_results.RULE,
        silent_results.MAY_GROW,
        keras_layers.RULE,
        # Source-level findings (the libcst pass; with --static too), docs/fixes.md.
        Rule("XLA107", "python-number-argument", "warning",
             "A loop passes a new Python number to a tf.function on every pass: one trace and one XLA "
             "compilation per value.", None),
        Rule("XLA401", "experimental-compile", "warning",
             "`experimental_compile=` is the deprecated name of `jit_compile=`.", None),
        Rule("XLA402", "xla-devices-flag", "warning",
             "TF_XLA_FLAGS=--tf_xla_enable_xla_devices only creates XLA devices: it does not turn on "
             "auto-clustering (--tf_xla_auto_jit=2 does).", None),
        # Reported by the run itself (docs/fixes.md, docs/suppressions.md).
        Rule("XLA403", "enable-jit-compile", "info",
             "A tf.function with no XLA blocker runs without XLA: jit_compile=True is on offer.", None),
        Rule("XLA801", "unused-suppression", "info",
             "An `# xlalint: ignore` comment that suppresses nothing.", None),
        # Reported by --verify when the compiler disagrees with the static verdict (an xlalint bug).
        Rule("XLA901", "missed-blocker", "error",
             "XLA failed to compile or run an entry that xlalint found no blocker in.", None),
        Rule("XLA902", "false-blocker", "warning",
             "XLA compiled and ran an entry that xlalint reported blockers in.", None),
    )
}


def resolve_codes(select: list[str] | None, ignore: list[str] = ()) -> tuple[str, ...]:
    """Rule codes matching any ``select`` prefix (all when None) and no ``ignore`` prefix."""
    for prefix in [*(select or []), *ignore]:
        if not any(code.startswith(prefix.upper()) for code in RULES):
            raise ValueError(f"{prefix!r} matches no rule code (known: {', '.join(RULES)})")

    def matches(code, prefixes):
        return any(code.startswith(p.upper()) for p in prefixes)

    return tuple(c for c in RULES if (select is None or matches(c, select)) and not matches(c, ignore))


def run_checks(graph, ctx: Context, codes=None) -> list[Hit]:
    """Hits of every rule (or of ``codes``), each check function run once."""
    wanted = set(codes) if codes is not None else set(RULES)
    checks = dict.fromkeys(rule.check for code, rule in RULES.items() if code in wanted and rule.check)
    return [hit for check in checks for hit in check(graph, ctx) if hit.code in wanted]


__all__ = ["CODE_RANGES", "Context", "Hit", "Rule", "RULES", "resolve_codes", "run_checks"]
