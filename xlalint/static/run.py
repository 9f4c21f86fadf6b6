"""``xlalint --static``: every file through the libcst pass; TensorFlow is never imported."""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat

import libcst as cst

from xlalint.checks.xla402_xla_devices_flag import env_file_findings
from xlalint.files import collect_files, display_path, is_env_file, is_saved_model, read_source
from xlalint.results import Entry, FileError, Finding, Report
from xlalint.static.api_table import load_table
from xlalint.static.limits import TOO_DEEP, refusal
from xlalint.static.scan import scan_source

RELEVANT = re.compile(r"tensorflow|keras|TF_XLA_FLAGS")  # files without these cannot have a finding
PARALLEL_FROM = 48  # files; fewer are scanned in this process


def check_file(path: str, device: str) -> tuple[list[Entry], list[Finding], list[FileError]]:
    """Entries (one per compiled function), findings and errors of one file."""
    shown = display_path(path)
    if is_env_file(path) and not path.endswith(".py"):
        return [], env_file_findings(path, shown), []
    if is_saved_model(path):
        return [], [], [FileError(shown, "a SavedModel is checked by tracing it: run without --static")]
    source, error = read_source(path)
    if error:
        return [], [], [FileError(shown, error)]
    if not RELEVANT.search(source):
        return [], [], []
    refused = refusal(source)  # fast, where libcst would be slow or recurse too deeply
    if refused:
        return [], [], [FileError(shown, refused)]
    try:
        scan = scan_source(shown, source, load_table(), device)
    except cst.ParserSyntaxError as error:  # syntax Python accepts and libcst does not know yet
        return [], [], [FileError(shown, f"syntax error at line {error.raw_line}: {error.message}")]
    except RecursionError:
        return [], [], [FileError(shown, TOO_DEEP)]
    blocked = {f.entry for f in scan.findings if f.severity == "error"}
    entries = [Entry(shown, fn.name, fn.line, "incompatible" if fn.name in blocked else "compatible")
               for fn in scan.functions]
    return entries, scan.findings, []


def run_static(paths: list[str], device: str = "gpu", excluded=None) -> Report:
    """Check ``paths`` (but none ``excluded(path)`` names) by API name; unreadable and unparsable files
    become ``report.errors``."""
    report = Report(device=device, tensorflow=load_table()["tensorflow"])
    files, report.errors = collect_files(paths, excluded)
    workers = min(os.cpu_count() or 1, 8)
    if len(files) >= PARALLEL_FROM and workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(check_file, files, repeat(device), chunksize=16))
    else:
        results = [check_file(path, device) for path in files]
    for entries, findings, errors in results:
        report.entries.extend(entries)
        report.findings.extend(findings)
        report.errors.extend(errors)
    return report
