"""Turn what ``xlalint run`` captured into the check command's report.

Each captured function is an entry of the file that defines it (a Keras step: of the file that
called ``fit``), checked by the same rules as a traced entry; each finding also points at the call
that reached it, with the specs seen. The report says where and why the run stopped, and lists
the ``tf.function``s the script defines that the run never reached.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace

from xlalint.autocluster.program import Seen
from xlalint.engine.analysis import captured_findings, file_findings, source_findings
from xlalint.inputs.files import display_path, read_source
from xlalint.inputs.notebooks import NotebookError, in_cells, is_notebook, place_of, read_notebook
from xlalint.core.results import Entry, FileError, Related, Report, one_per_place, place
from xlalint.engine.selection import Produced, select
from xlalint.settings.table import Options
from xlalint.engine.static_fallback import reached
from xlalint.core.specs import signature_text
from xlalint.source.index import decorated_tf_functions
from xlalint.source.suppressions import SuppressionIndex
from xlalint.core.support import load_support
from xlalint.core.wire import AutoJit, CapturedRecord, EntryRecord, file_result


def _call_text(record: CapturedRecord, call: list) -> str:
    """`f` called here, in `main()`, with (the first call's shapes) from a dataset of (its relaxed spec)."""
    seen = signature_text(record["signature"])
    caller = "at module level" if call[2] == "<module>" else f"in `{call[2]}()`"
    text = f"`{record['name']}` called here, {caller}, with ({seen})"
    relaxed = [signature_text(spec) for spec in record.get("dataset_specs", ())]
    if relaxed and relaxed[0] != seen:
        text += f" from a dataset of ({relaxed[0]})"
    return text + (f", traced {record['traces']} times" if record["traces"] > 1 else "")


def _site(where: list | None) -> str:
    if not where:
        return "an unknown place"
    return f"{place(display_path(where[0]), where[1], place_of(where[0], where[1]))} in `{where[2]}()`"


def defined_tf_functions(path: str) -> list[tuple[str, int]]:
    """``(name, def line)`` of each function the file decorates with ``tf.function`` (any arguments)."""
    source, error = read_source(path)
    return [] if error else decorated_tf_functions(source)


def seen_mode(auto_jit: AutoJit | None) -> Seen:
    """Auto-clustering as the run showed it when it captured an entry (``Capture._auto_jit`` in the child)."""
    if auto_jit is None:
        return Seen(None)
    if auto_jit["flags"] is not None:
        source = f"TF_XLA_FLAGS={auto_jit['flags'].strip()} in the run"
    elif auto_jit["where"]:
        source = f"set_jit called at {place(display_path(auto_jit['where'][0]), auto_jit['where'][1])} in the run"
    else:
        source = "set_jit called in the run"
    return Seen(source, auto_jit["cpu_global_jit"])


def _rerun_text(rerun: dict | None) -> str | None:
    """Why the script ran twice (``client.with_rerun``), and which run the report shows."""
    if not rerun:
        return None
    stop = rerun["stop"]
    where = f" at {_site(stop['where'])}" if stop["where"] else ""
    text = f"zeros from `{rerun['zeros_from']}` broke the script{where} ({stop['reason']}); ran again with real values"
    if rerun["kept"] == "real values":
        return text + " (each compiled function's calls run for real, without XLA, as with --first-step)"
    return text + f", but kept the first run: {rerun['why']}"


def _skipped(script: str) -> list[dict]:
    """A notebook's magic and shell lines that ran as ``pass`` (``NotebookModule.skipped``)."""
    try:
        return read_notebook(script).skipped() if is_notebook(script) else []
    except (NotebookError, OSError):
        return []


def _with_call(finding, call: Related | None):
    """The finding with the call that reached its entry as a related place (unless it is that place, or a related
    place of it already: a Keras layer's call, say)."""
    if call is None or (call.path, call.line) in [(finding.path, finding.line),
                                                  *((r.path, r.line) for r in finding.related)]:
        return finding
    return replace(finding, related=finding.related + (call,))


def _digest(path: str) -> str:
    """The SHA-256 of the file a fix would edit, as the report saw it (a fix refuses a file changed since)."""
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def run_report(result: dict, script: str, options: Options) -> Report:
    """The report of one run; ``script`` is the file run (or the module's file)."""
    report = Report(device=options.device, tensorflow=result.get("tensorflow"))
    shown = display_path(script)
    if result.get("error"):
        report.errors.append(FileError(shown, result["error"]))
        return report
    stop = result["stop"]
    records: list[CapturedRecord] = result["records"]
    suppressions = SuppressionIndex()
    support = load_support(report.tensorflow)
    report.tables = support.tables_used(report.tensorflow)
    by_file: dict[str, list[EntryRecord]] = {}
    for record in records:
        entry: CapturedRecord = {**record, "seen_mode": seen_mode(record.get("auto_jit"))}
        by_file.setdefault(record["path"], []).append(entry)
    produced: list[Produced] = []
    for path, entries in by_file.items():
        produced += file_findings(report, file_result(path, entries=entries), support, options, False)
    produced += captured_findings(report, records)
    calls = {r["name"]: Related(display_path(call[0]), call[1], _call_text(r, call)) for r in records
             if (call := r.get("call"))}
    produced = [replace(p, finding=_with_call(p.finding, calls.get(p.finding.entry))) for p in produced]
    produced += map(Produced, source_findings(os.path.abspath(script), options))
    report.findings = in_cells(one_per_place(select(report, produced, options, suppressions)))
    report.sources = {os.path.abspath(f.path): _digest(f.path) for f in report.findings if f.fix}
    captured = {(r["path"], r["line"]) for r in records}
    called_inside, _ = reached(records)  # also the tf.functions a captured graph calls
    for name, line in defined_tf_functions(script):
        if (os.path.realpath(script), line) not in captured and name not in called_inside:
            report.entries.append(Entry(shown, name, line, "unknown", "never called before the run stopped"))
    if not records and stop["kind"] in ("error", "exit", "network"):
        where = "" if stop["kind"] == "network" else f" at {_site(stop['where'])}"
        report.errors.append(FileError(shown, f"{stop['reason']}{where}, before any tf.function was called"))
    report.entries = in_cells(report.entries)
    report.run = {"script": shown, "stopped": stop["kind"], "reason": stop["reason"],
                  "where": _site(stop["where"]) if stop["where"] else None, "calls": result.get("calls", 0),
                  "trace_s": round(sum(r["timing"]["trace_s"] for r in records if "timing" in r), 3),
                  "rerun": _rerun_text(result.get("rerun")), "skipped": _skipped(script),
                  "written_to_scratch": sorted({p.split(os.sep)[0] for p in result.get("redirected", [])}),
                  "refused_writes": [{**r, "where": _site(r["where"])} for r in result.get("refused", [])]}
    return report
