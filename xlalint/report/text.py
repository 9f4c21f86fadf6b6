"""Default output: findings grouped by file, then errors, then a summary."""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from tabulate import tabulate

from xlalint.autocluster.judge import share_text
from xlalint.ci.baseline import summary_lines as baseline_lines
from xlalint.engine.coverage import framework_off, is_ready, summary_lines as coverage_lines
from xlalint.core.results import Report, place
from xlalint.core.tables import describe

COLORS = {"error": "31", "warning": "33", "info": "36", "path": "1", "hint": "2"}


def _paint(text: str, role: str, color: bool) -> str:
    return f"\033[{COLORS[role]}m{text}\033[0m" if color else text


def emit(report: Report, color: bool = False) -> str:
    """Human-readable report; ``color`` adds ANSI colours (the CLI sets it for a TTY without NO_COLOR)."""
    out: list[str] = []
    ordered = sorted(report.findings, key=lambda f: (f.path, f.line, f.col, f.code))
    for path, findings in groupby(ordered, key=lambda f: f.path):
        out.append(_paint(path, "path", color))
        for f in findings:
            tag = _paint(f"{f.code} [{f.severity}]", f.severity, color)
            out.append(f"  {f.where}: {tag} {f.message}  ({', '.join(f.all_entries)})")
            out.extend(f"      related: {place(r.path, r.line, r.cell)}: {r.message}" for r in f.related)
            out.append(_paint(f"      hint: {f.hint}", "hint", color))
        out.append("")
    for error in report.errors:
        out.append(f"{error.path}: {'notice' if error.notice else 'error'}: {error.message}")
    for entry in report.entries:
        if entry.verdict == "unknown":
            out.append(f"{entry.where}: `{entry.name}` not checked: {entry.error}")
    if report.errors or any(e.verdict == "unknown" for e in report.entries):
        out.append("")
    out.extend(_mode_lines(report.entries))
    verified = [e for e in report.entries if e.verify]
    if verified:
        out.extend([_verify_table(verified), ""])
    for run in [report.run] if report.run else report.runs:
        out.extend(_run_lines(run))
    out.extend(_summary(report))
    return "\n".join(out)


def _run_lines(run: dict) -> list[str]:
    """`xlalint run`: where and why the script's run stopped, and what it wrote."""
    where = f" at {run['where']}" if run["where"] else ""
    what = f"`{run['command']}`" if "command" in run else run["script"]
    lines = [f"run of {what} stopped{where}: {run['reason']} ({run['calls']} compiled-function calls answered)"]
    if run.get("rerun"):
        lines.append(f"  {run['rerun']}")
    if run.get("skipped"):
        lines.append("  skipped (IPython magics and shell lines xlalint does not run): "
                     + ", ".join(f"cell {s['cell']}:{s['line']} `{s['text']}`" for s in run["skipped"]))
    if run["written_to_scratch"]:
        lines.append(f"  writes kept out of your tree (to a scratch folder, removed): "
                     f"{', '.join(run['written_to_scratch'][:5])}" + (" ..." if len(run["written_to_scratch"]) > 5 else ""))
    lines += [f"  refused: {r['call']} of {r['path']} at {r['where']}" for r in run["refused_writes"]]
    return lines + [""]


def _mode_lines(entries) -> list[str]:
    """How the program runs each entry, when one is auto-clustered or xlalint could not tell."""
    if not any(e.xla_mode == "auto-clustering" or e.xla_mode_note for e in entries):
        return []
    lines = ["XLA mode per entry:"]
    for e in entries:
        mode = MODE_NAMES.get(e.xla_mode, e.xla_mode)
        source = f" ({e.xla_mode_source})" if e.xla_mode_source and e.xla_mode != "jit_compile" else ""
        lines.append(f"  {e.path}::{e.name}: {mode}{source}: {_outcome(e)}")
        if e.autocluster:
            lines += _autocluster_lines(e.autocluster)
        if e.xla_mode_note:
            lines.append(f"      note: {e.xla_mode_note}")
    return lines + [""]


MODE_NAMES = {"jit_compile": "jit_compile=True", "auto-clustering": "auto-clustering",
              "as-if-jit_compile": "judged as if jit_compile=True"}


def _outcome(entry) -> str:
    a = entry.autocluster
    if entry.verdict == "unknown" or not a:
        return {"unknown": "not checked"}.get(entry.verdict, entry.verdict)
    runs = "does not compile" if entry.verdict == "incompatible" else "runs"
    return f"{runs}; {share_text(a)} under XLA in {len(a['clusters'])} cluster(s) ({a['compiled_ops']} of " \
           f"{a['total_ops'] - a['chosen_ops']} ops)"


def _autocluster_lines(a: dict) -> list[str]:
    lines = []
    for s in a["splitters"]:
        why = "left out by jit_scope(compile_ops=False)" if "scope" in s else f"left out: {s['reason']}"
        lines.append(f"      {s['op_type']} ({s['op_name']}) at {place(s['path'], s['line'], s.get('cell'))}: {why}")
    lines += [f"      note: the jit_scope(compile_ops=False) at {u['path']}:{u['line']} holds only ops XLA compiles "
              f"({', '.join(u['ops'])}): it is not needed, and each boundary costs a split" for u in a["unneeded_scopes"]]
    return lines


def _number(value, scale: float = 1.0, digits: int = 2) -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}"


def _verify_table(entries) -> str:
    rows = []
    for e in entries:
        v = e.verify
        rows.append([
            f"{e.path}::{e.name}", v["device"] or "-", "yes" if v["compiled"] else "NO",
            "-" if v["allclose"] is None else ("yes" if v["allclose"] else "NO"),
            "-" if v["max_abs_diff"] is None else f"{v['max_abs_diff']:.1e}",
            _number(v["compile_s"]), _number(v["xla_step_s"], 1e3), _number(v["tf_step_s"], 1e3),
            "-" if v["speedup"] is None else f"{v['speedup']:.2f}x", v["compilations"] if v["compilations"] is not None else "-",
            _number(v["xla_peak_bytes"], 2**-20, 1), _number(v["tf_peak_bytes"], 2**-20, 1),
        ])
    headers = ["entry", "device", "compiled", "allclose", "max diff", "compile s", "XLA ms", "TF ms",
               "speedup", "compiles", "XLA MiB", "TF MiB"]
    return "verify (compiled and run with and without XLA):\n" + tabulate(rows, headers=headers, disable_numparse=True)


def _summary(report: Report) -> list[str]:
    if report.interrupted:
        return [f"run cut short by {report.interrupted}: results are incomplete"]
    if not report.entries and not report.errors and not report.findings:
        return ["nothing to check: no file with TensorFlow entry points found"]
    verdicts = Counter(e.verdict for e in report.entries)
    lines = [
        f"{len(report.entries)} entries checked for XLA on {report.device}: "
        f"{verdicts['compatible']} compatible, "
        + (f"{verdicts['runs']} running under auto-clustering with ops left out of XLA, " if verdicts["runs"] else "")
        + f"{verdicts['incompatible']} incompatible, "
        f"{verdicts['unknown']} not traceable; {sum(not e.notice for e in report.errors)} file errors"
        + (f", {notices} without entry points" if (notices := sum(e.notice for e in report.errors)) else "")
    ]
    keras_off = framework_off(report)  # Keras keeps XLA off
    ready = [f"{e.path}::{e.name}" for e in report.entries if e.jit_compile is not True and is_ready(e, keras_off)]
    lines += coverage_lines(report)
    if ready:
        lines.append("ready for jit_compile=True: " + ", ".join(ready))
    codes = Counter(f.code for f in report.findings)
    if codes:
        lines.append("findings: " + ", ".join(f"{code} x{n}" for code, n in sorted(codes.items())))
    if report.tables:
        lines.append(describe(report.tables))
    if report.baseline:  # last: it ends with the command that refreshes the baseline
        lines += baseline_lines(report.baseline)
    return lines
