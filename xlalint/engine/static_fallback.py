"""Never less than ``--static``: the static pass's findings in code the trace did not reach.

An entry that could not be traced (no input_signature, a file that failed to import, a function
defined inside ``main()``) still gets what the libcst pass finds in it, marked as static by its
message. A place the trace did reach is answered by the trace alone.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any, Mapping, Sequence

from xlalint.core.results import Finding

HOW_TO_TRACE = (" Not traced, so found by API name only: to check it fully, give its arguments "
                "(`xlalint FILE::NAME --spec \"float32[8,16]\"` or `specs` in [tool.xlalint]), or run the "
                "script with `xlalint run`.")


def reached(entries: Sequence[Mapping[str, Any]]) -> tuple[set[str], set[tuple[str, int]]]:
    """Names of the traced entries and of the tf.functions their graphs call; the user lines their ops came from."""
    names: set[str] = set()
    lines: set[tuple[str, int]] = set()
    for entry in entries:
        graph = entry.get("graph")
        if not graph:
            continue
        names.add(entry["name"])
        names.update(covered["name"] for covered in entry.get("covers", ()))  # models checked inside this entry
        names.update(m.group(1) for f in graph["functions"] if (m := re.fullmatch(r"__inference_(.+)_\d+", f)))
        for node in graph["nodes"]:
            lines.update((f, line) for f, line, _ in node.get("frames", ()))
            if node.get("layer"):
                lines.add((node["layer"]["file"], node["layer"]["line"]))
    real = {f: os.path.realpath(f) for f in {f for f, _ in lines}}  # a few files, thousands of ops
    return names, {(real[f], line) for f, line in lines}


def untraced(static: list[Finding], entries: Sequence[Mapping[str, Any]], traced: list[Finding]) -> list[Finding]:
    """The ``static`` findings of one file at places no traced entry reached, with how to check them fully."""
    names, places = reached(entries)
    places |= {(os.path.realpath(f.path), f.line) for f in traced}
    kept = []
    for finding in static:
        if (os.path.realpath(finding.path), finding.line) in places:
            continue
        if all(name in names or name.rsplit(".", 1)[-1] in names for name in finding.all_entries):
            continue
        kept.append(replace(finding, hint=finding.hint + HOW_TO_TRACE))
    return kept
