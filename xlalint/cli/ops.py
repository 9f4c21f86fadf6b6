"""``xlalint ops``: print the XLA support table of the installed TensorFlow."""

from __future__ import annotations

from tabulate import tabulate

from xlalint.core.support import APPROXIMATE_DEVICES, SupportTable


def _constraints_text(kernels: list[dict]) -> str:
    return " | ".join(
        "; ".join(f"{attr}: {', '.join(types)}" for attr, types in sorted(k.items())) or "any dtype"
        for k in kernels
    )


def render(support: SupportTable, device: str, ops: list[str]) -> tuple[str, int]:
    """The table text and an exit code (1 when a requested op has no kernel)."""
    table = support.kernels(device)
    names = ops or sorted(table)
    rows, missing = [], 0
    for name in names:
        kernels = table.get(name)
        missing += kernels is None
        const = ", ".join(support.const_inputs.get(name, []))
        rows.append([name, "yes" if kernels else "NO", _constraints_text(kernels or []), const])
    note = f"TensorFlow {support.tensorflow}, XLA on {device} ({support.source} table)"
    if device in APPROXIMATE_DEVICES:
        note += "; approximate: no TPU backend is registered in this build"
    text = tabulate(rows, headers=["op", "XLA kernel", "dtype constraints", "compile-time constant inputs"])
    return f"{text}\n\n{len([r for r in rows if r[1] == 'yes'])} of {len(rows)} ops listed have a kernel; {note}", int(missing > 0)
