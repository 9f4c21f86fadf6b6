"""XLA coverage: is XLA on for each entry, could it be, and how many of its ops run under XLA.

Every number is defined in docs/coverage.md. ``coverage(report)`` is a pure function of the report;
``auto_jit_sites`` reads the checked files for the settings that turn auto-clustering on.
"""

from __future__ import annotations

from collections import defaultdict

from xlalint.autocluster.program import AUTO_CLUSTERING, sites_in
from xlalint.checks import RULES
from xlalint.core.opgraph import BRANCH_OPS, CALL_OPS, PASS_THROUGH, WHILE_OPS, OpGraph
from xlalint.core.results import Entry, Report

# Arguments, constants and pass-throughs do no work; call and control-flow ops only hold
# functions whose own ops are counted.
NO_WORK = frozenset({"Placeholder", "Const", "NoOp"}) | PASS_THROUGH | CALL_OPS | WHILE_OPS | BRANCH_OPS


def count_ops(graph: OpGraph) -> int:
    """Ops of the entry's graph that do work, nested function bodies included."""
    return sum(1 for node in graph.nodes() if node["type"] not in NO_WORK)


def auto_jit_sites(files: list[str]) -> list[str]:
    """``path:line`` of each line in ``files`` that turns auto-clustering on (comments skipped)."""
    return [str(site) for path in files for site in sites_in(path)]


def turned_on_at(report: Report) -> list[str]:
    """Where auto-clustering is turned on for the run's entries (``--static``: in the checked files)."""
    return report.auto_jit or list(dict.fromkeys(
        e.xla_mode_source for e in report.entries if e.xla_mode == AUTO_CLUSTERING and e.xla_mode_source))


def is_ready(entry: Entry, keras_off: set) -> bool:
    """No blocker, Keras would keep jit_compile=True (``keras_off``: ``framework_off``), and one XLA cluster can
    reach its variables (a distribution strategy's copies on several devices: XLA305)."""
    return entry.verdict == "compatible" and (entry.path, entry.name) not in keras_off and not entry.variable_devices


def _entry(entry: Entry, keras_off: set) -> dict:
    ready = is_ready(entry, keras_off)
    xla = "jit_compile" if entry.jit_compile else "auto-clustering" if entry.xla_mode == AUTO_CLUSTERING else None
    under = 0
    if entry.ops is not None:
        if xla == "jit_compile" and ready:
            under = entry.ops
        elif xla == "auto-clustering" and entry.autocluster and entry.autocluster["total_ops"]:
            share = entry.autocluster
            under = round(entry.ops * share["compiled_ops"] / (share["total_ops"] - share["chosen_ops"] or 1))
    return {"name": entry.name, "line": entry.line, "xla": xla, "ready": ready, "ops": entry.ops,
            "ops_under_xla": under if entry.ops is not None else None, "xla_off": entry.xla_off}


def _totals(rows: list[dict]) -> dict:
    ops = sum(r["ops"] or 0 for r in rows)
    under = sum(r["ops_under_xla"] or 0 for r in rows)
    return {"entries": len(rows), "xla_on": sum(r["xla"] is not None for r in rows),
            "ready": sum(r["ready"] and r["xla"] != "jit_compile" for r in rows),
            "ops": ops, "ops_under_xla": under, "percent": round(100 * under / ops, 1) if ops else None}


def framework_off(report: Report) -> set[tuple[str, str]]:
    """(path, entry) of the entries a framework runs without XLA even with jit_compile=True (a rule with
    ``disables_xla`` says so, or Keras' decision for a compiled model). Such a finding of a model checked
    as part of its caller names the model, no row: the caller runs it under its own jit_compile."""
    off = {(f.path, name) for f in report.findings if RULES[f.code].disables_xla for name in f.all_entries}
    return off | {(e.path, e.name) for e in report.entries if e.keras_refuses_jit}


def coverage(report: Report) -> dict:
    """The run's totals, with each file's totals and entries (see docs/coverage.md)."""
    keras_off = framework_off(report)
    per_file: dict[str, list[dict]] = defaultdict(list)
    for entry in report.entries:
        per_file[entry.path].append(_entry(entry, keras_off))
    files = [{"path": path, **_totals(rows), "by_entry": rows} for path, rows in per_file.items()]
    return {**_totals([r for rows in per_file.values() for r in rows]), "auto_clustering": turned_on_at(report),
            "files": files}


def _phrase(totals: dict) -> str:
    text = f"XLA on for {totals['xla_on']} of {totals['entries']} entries"
    if totals["ops"]:
        text += f", {_percent(totals)} of ops"
    ready = totals["ready"]
    if ready:
        text += f"; {ready} more {'is' if ready == 1 else 'are'} ready for jit_compile=True"
    return text


def _percent(totals: dict) -> str:
    """Whole percent, rounded down: 100% only when every op runs under XLA."""
    return f"{totals['ops_under_xla'] * 100 // totals['ops']}%"


def summary_lines(report: Report) -> list[str]:
    """The coverage lines of the text summary; none when no entry was traced (e.g. --static)."""
    if not any(e.ops is not None for e in report.entries):
        return []
    data = coverage(report)
    lines = [_phrase(data)]
    if len(data["files"]) > 1:
        lines += [f"  {f['path']}: {_phrase(f)}" for f in data["files"]]
    if turned_on_at(report):
        lines.append(f"auto-clustering is turned on at {', '.join(turned_on_at(report))}: "
                     "its predicted share of each entry's ops counts as under XLA")
    return lines


def below(report: Report, minimum: float) -> str | None:
    """Why the run fails ``--min-coverage minimum`` (percent of ops under XLA), or None when it passes."""
    data = coverage(report)
    if data["ops"] and data["ops_under_xla"] * 100 < minimum * data["ops"]:
        return (f"XLA coverage {data['ops_under_xla'] * 100 / data['ops']:.1f}% of ops is below "
                f"--min-coverage {minimum:g}%")
    return None
