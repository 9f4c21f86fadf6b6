"""Per-file result cache: an unchanged file is answered without starting TensorFlow.

A result is stored under a key made of the request (file, targets, options), the
file's content, and the xlalint, TensorFlow and Python versions. It also records
the content hash of every user file that was loaded while tracing it (the worker's
``deps``); a later lookup is a hit only if all of them are unchanged, so an edit to
any imported project module invalidates it. Only clean results are stored (no
import error, crash or timeout), never ``--verify`` runs (timings are not reusable),
and entries are written by atomic rename, so concurrent runs are safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from xlalint import __version__

GRAPH_FORMAT = 4  # bump when the worker's graph records change (e.g. a new exported attr)


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


class ResultCache:
    def __init__(self, directory: str | Path, tensorflow: str | None):
        self.directory = Path(directory)
        self.salt = {"xlalint": __version__, "graph": GRAPH_FORMAT, "tensorflow": tensorflow,
                     "python": sys.version.split()[0]}

    def cacheable(self, request: dict) -> bool:
        return not request.get("verify") and not request.get("saved_model")

    def _file(self, request: dict) -> Path | None:
        content = _digest(request["path"])
        if content is None:
            return None
        text = json.dumps([self.salt, request, content], sort_keys=True)
        return self.directory / f"{hashlib.sha256(text.encode()).hexdigest()}.json"

    def get(self, request: dict) -> dict | None:
        path = self._file(request) if self.cacheable(request) else None
        try:
            stored = json.loads(path.read_text(encoding="utf-8")) if path else None
        except (OSError, ValueError):
            return None
        if stored and all(_digest(dep) == digest for dep, digest in stored["deps"].items()):
            return stored["result"]
        return None

    def put(self, request: dict, result: dict) -> None:
        path = self._file(request) if self.cacheable(request) and not result.get("error") else None
        if path is None:
            return
        deps = {dep: _digest(dep) for dep in result.get("deps", [])}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"deps": deps, "result": result}, out)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs time
