"""A file's analysis stored beside its trace: an unchanged file under unchanged settings is answered without
libcst, the rules or decoding its graph.

What the analysis (``xlalint.engine.analysis``) adds to a run for one traced Python file, its ``Answer`` (its
entries, its errors, every finding its rules produced before selection, whether it counts as checked), is kept
in the result cache's folder (``xlalint.tracing.cache``: the same entry layout, checks, atomic writes and size cap)
under a key made of:

- the trace's key (the request, the file's content, the versions and the machine); the trace's deps are recorded
  and checked as for the trace;
- every setting but the output-only ones (``OUTPUT_ONLY``): a new setting is in the key unless it is added there;
- the folder paths are shown from (the working directory) and whether the file was named;
- what its XLA mode is read from besides the file (``autocluster.program``): the auto-clustering sites beside and
  above it, and ``TF_XLA_FLAGS``;
- the versions of the libraries the analysis runs (``LIBRARIES``), the date of a support table generated on this
  machine, and xlalint's own files (each one's path, size and modification time: an edit to a rule is a miss while
  the version stays the same).

Selection, suppressions and the report are made again on every run. Not stored: ``--save-graphs`` runs (the
analysis writes the graphs), what the trace cache does not store (``--verify``, SavedModels, a failed trace), a
file traced by another TensorFlow than the installed one, a file whose captured findings count for another file's
entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlalint.autocluster.program import program_sites
from xlalint.core.own_code import code_digest
from xlalint.core.results import Entry, FileError, Finding
from xlalint.core.support import generated_table, installed_tensorflow, installed_version
from xlalint.core.wire import Request
from xlalint.inputs.files import shown_from
from xlalint.settings.table import Options
from xlalint.tracing.cache import ResultCache

# settings the analysis of a file never reads: how the run goes and what is done with its report
OUTPUT_ONLY = frozenset({"progress", "jobs", "cache_dir", "cache_max_mb", "shard", "baseline", "min_coverage",
                         "strict"})

# what the analysis runs besides xlalint's own code: the source pass (libcst), the op graph (networkx), constants
# evaluated in a graph (numpy)
LIBRARIES = ("libcst", "networkx", "numpy")

# A finding as a rule produced it (``engine.selection.Produced``, which imports the rules): the finding, the
# indexes of the entries it counts for among the file's own, the (file, line) of its traced entry.
Produced = tuple[Finding, tuple[int, ...], "tuple[str, int] | None"]


@dataclass
class Answer:
    """What the analysis of one file adds to its run."""

    entries: list[Entry]
    errors: list[FileError]
    produced: list[Produced]
    checked: bool

    def to_json(self) -> dict:
        return {"entries": [e.to_json() for e in self.entries], "errors": [e.to_json() for e in self.errors],
                "produced": [[f.to_json(), list(entries), site] for f, entries, site in self.produced],
                "checked": self.checked}

    @classmethod
    def from_json(cls, data: dict) -> Answer:
        """The answer ``to_json`` wrote; TypeError, KeyError or ValueError for anything else."""
        if not isinstance(data["checked"], bool):
            raise TypeError("checked")
        return cls([Entry(**e) for e in data["entries"]], [FileError(**e) for e in data["errors"]],
                   [(Finding.from_json(f), tuple(map(int, entries)), (str(site[0]), int(site[1])) if site else None)
                    for f, entries, site in data["produced"]], data["checked"])


def _plain(value: Any) -> Any:
    """A setting's value as JSON: a set sorted; anything else unknown by its repr."""
    return sorted(value) if isinstance(value, (set, frozenset)) else repr(value)


def _modified(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


class AnalysisCache:
    """The analyses of one run's files, stored in ``results``' folder; ``explicit``: the files named on the
    command line."""

    def __init__(self, results: ResultCache, options: Options, explicit: set[str]):
        self.results, self.explicit = results, explicit
        self.writes_files = bool(options.save_graphs)
        settings = {f.name: getattr(options, f.name) for f in dataclasses.fields(options) if f.name not in OUTPUT_ONLY}
        tensorflow = installed_tensorflow()
        libraries = [installed_version(name) for name in LIBRARIES]
        self.salt = json.dumps([settings, code_digest(), libraries, os.environ.get("TF_XLA_FLAGS"),
                                _modified(generated_table(tensorflow))], sort_keys=True, default=_plain)
        self.tensorflow = tensorflow
        self._asked: dict[str, tuple[str, float]] = {}  # path -> (its key, when it was looked up)

    def _keys(self, request: Request) -> tuple[str, str] | None:
        """The key of ``request``'s analysis, and of its trace."""
        trace = self.results.key(request) if self.results.cacheable(request) and not self.writes_files else None
        if trace is None:
            return None
        path = request["path"]
        applies, others = program_sites(path)
        text = json.dumps([trace, self.salt, shown_from(), path in self.explicit,
                           [[repr(site), str(site)] for site in applies + others]])
        return hashlib.sha256(text.encode()).hexdigest(), trace

    def get(self, request: Request) -> Answer | None:
        """The stored analysis of ``request``'s file, when one is stored under its key and intact."""
        since = time.time()
        keys = self._keys(request)
        if keys is None:
            return None
        key, trace = keys
        self._asked[request["path"]] = key, since
        stored = self.results.read(key, lambda result: isinstance(result, dict))
        try:
            answer = None if stored is None else Answer.from_json(stored)
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
        if answer is not None:
            self.results.touch(trace)  # kept as long as its analysis: a changed setting needs only the analysis again
        return answer

    def put(self, request: Request, deps: list[str], answer: Answer, tensorflow: str | None) -> None:
        """Store the analysis of ``request``'s file (made with the support table of ``tensorflow``) under the key it
        was looked up with, unless something it read changed since."""
        asked = self._asked.pop(request["path"], None)
        if asked is None or tensorflow != self.tensorflow or any(i < 0 for _, ids, _ in answer.produced for i in ids):
            return
        key, since = asked
        if (self._keys(request) or (None,))[0] != key:  # the file or its sites changed while it was analysed
            return
        self.results.write(key, request["path"], deps, json.dumps(answer.to_json()), since)
