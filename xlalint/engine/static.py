"""``xlalint --static``: every file through the source pass alone; TensorFlow is never imported."""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from typing import Mapping

import libcst as cst

from xlalint.autocluster.judge import judged_by_name
from xlalint.inputs.files import display_path, is_env_file, is_saved_model, read_source
from xlalint.core.results import Entry, FileError, Finding
from xlalint.engine.selection import PENDING
from xlalint.source.api_table import load_table
from xlalint.source.limits import TOO_DEEP, refusal
from xlalint.engine.source_pass import scan_source, scan_text

RELEVANT = re.compile(r"tensorflow|keras|TF_XLA_FLAGS")  # files without these cannot have a finding
PARALLEL_FROM = 48  # files; fewer are scanned in this process


def check_file(path: str, device: str, mode: str,
               text: str | None = None) -> tuple[list[Entry], list[Finding], list[FileError]]:
    """Entries (one per compiled function, verdict pending), findings and errors of one file; ``mode`` is
    ``--mode``, for the XLA mode each function runs in (``judged_by_name``). ``text``: the Python source to
    check in place of the file's (an editor's unsaved buffer; a notebook's cells as one module)."""
    shown = display_path(path)
    if is_env_file(path) and not path.endswith(".py"):
        return [], scan_text(path, shown), []
    if is_saved_model(path):
        return [], [], [FileError(shown, "a SavedModel is checked by tracing it: run without --static")]
    source, error = read_source(path) if text is None else (text, None)
    if error:
        return [], [], [FileError(shown, error)]
    if not RELEVANT.search(source):
        return [], [], []
    refused = refusal(source)  # fast, where libcst would be slow or recurse too deeply
    if refused:
        return [], [], [FileError(shown, refused)]
    try:
        scan = scan_source(shown, source, load_table(), device)
    except cst.ParserSyntaxError as parse_error:  # syntax Python accepts and libcst does not know yet
        return [], [], [FileError(shown, f"syntax error at line {parse_error.raw_line}: {parse_error.message}")]
    except RecursionError:
        return [], [], [FileError(shown, TOO_DEEP)]
    return ([Entry(shown, fn.name, fn.line, PENDING) for fn in scan.functions],
            judged_by_name(scan.findings, scan.functions, path, mode, device), [])


def check_files(files: list[str], device: str, mode: str, texts: Mapping[str, str] | None = None,
                ) -> list[tuple[list[Entry], list[Finding], list[FileError]]]:
    """``check_file`` of each file, in order (``texts``: path -> source read in place of the file's); in
    several processes when there are many."""
    workers = min(os.cpu_count() or 1, 8)
    given = [(texts or {}).get(path) for path in files]
    if len(files) >= PARALLEL_FROM and workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            return list(pool.map(check_file, files, repeat(device), repeat(mode), given, chunksize=16))
    return [check_file(path, device, mode, text) for path, text in zip(files, given)]
