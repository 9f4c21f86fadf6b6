"""Per-file result cache: an unchanged file is answered without starting TensorFlow.

A result is stored under a key made of the request (the file's absolute path,
targets, options), the file's content, the xlalint, graph format, TensorFlow, Keras
and Python versions, and the machine's system, processor and TensorFlow
distribution (``build_tag``): a cache restored on another machine (CI) answers
only what that machine would trace alike, and is a miss elsewhere. It also records
the content hash of every file the worker reports as read while tracing it
(``deps``); a later lookup is a hit only if all of them are unchanged (a dep that
is gone, or appeared, is a change), so an edit to any imported project module or
data file invalidates it. Only clean results are stored (no import error, crash or
timeout), never ``--verify`` runs (timings are not reusable), never a result whose
file or deps were modified during the trace, and entries are written by atomic
rename, so concurrent runs are safe.

Every entry is checked on read: anything but the shape written here, with a
matching checksum of the result's stored text, is a miss. The directory is capped at
``max_mb``: when a write passes it, the least recently used entries (a hit
refreshes an entry's mtime) are deleted. The same folder, layout and checks hold each
file's analysis (``xlalint.engine.analysis_cache``): ``read`` and ``write`` store any result.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from xlalint.version import VERSION
from xlalint.inputs.files import file_digest
from xlalint.core.support import build_tag, installed_version
from xlalint.core.wire import FORMAT, FileResult, Request

DEFAULT_MAX_MB = 512
STALE_TMP_S = 3600  # a *.tmp this old is a write that never finished


def _checksum(text: str) -> str:
    """The checksum of a result's JSON text (``json.dumps`` with its defaults)."""
    return hashlib.sha256(text.encode()).hexdigest()


def _entry_ok(entry) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("name"), str) and type(entry.get("line")) is int
            and isinstance(entry.get("kind"), str) and isinstance(entry.get("signature"), list)
            and (entry.get("graph") is None or isinstance(entry["graph"], dict)
                 and entry["graph"].get("format") == FORMAT)
            and isinstance(entry.get("error"), (str, type(None))))


_DEPS, _CHECKSUM, _RESULT = '{"deps": ', ', "checksum": "', '", "result": '


def _entry_text(deps: dict, result_text: str) -> str:
    """The text of ``json.dumps({"deps", "checksum", "result"})`` with the result already encoded (once, by the
    C encoder: ``json.dump`` streams through the pure-Python one, 0.5 s for a ResNet50 training step's result)."""
    return f"{_DEPS}{json.dumps(deps)}{_CHECKSUM}{_checksum(result_text)}{_RESULT}{result_text}}}"


def _read_entry(text: str) -> dict | None:
    """``{"deps", "result"}`` from an entry's text when it has exactly the layout ``_entry_text`` writes and the
    checksum matches the result's text as stored (checked on the bytes: a ResNet50 result is 3 MB, which
    encoding again would take a third of a second); None otherwise."""
    if not text.startswith(_DEPS):
        return None
    deps, end = json.JSONDecoder().raw_decode(text, len(_DEPS))
    digest, found, result_text = text[end + len(_CHECKSUM):].partition(_RESULT)  # a digest holds no quote
    if (not text.startswith(_CHECKSUM, end) or not found or not result_text.endswith("}")
            or digest != _checksum(result_text[:-1])):
        return None
    return {"deps": deps, "result": json.loads(result_text[:-1])}


def _valid(result, path: str) -> bool:
    """``result`` (of an intact entry) has the shape ``put`` writes, for ``path``."""
    return (isinstance(result, dict) and result.get("path") == path and result.get("error") is None
            and isinstance(result.get("entries"), list) and all(_entry_ok(e) for e in result["entries"]))


def _changed_since(path: str, moment: float) -> bool:
    """Written after ``moment``: during the trace, maybe after the worker read it (the result may be stale)."""
    try:
        return os.stat(path).st_mtime > moment
    except OSError:
        return False  # a missing dep is recorded as missing


def _files(directory: Path) -> list[tuple[float, int, Path]]:
    """(mtime, size, path) of the entries and unfinished writes in ``directory``."""
    found = []
    try:
        with os.scandir(directory) as listing:
            for item in listing:
                if item.name.endswith((".json", ".tmp")) and item.is_file(follow_symlinks=False):
                    info = item.stat(follow_symlinks=False)
                    found.append((info.st_mtime, info.st_size, Path(item.path)))
    except OSError:
        pass
    return found


def clear(directory: str | Path) -> tuple[int, int]:
    """Delete every entry (and unfinished write) in ``directory``, nothing else; (files, bytes) removed."""
    removed = [0, 0]
    for _, size, path in _files(Path(directory)):
        try:
            path.unlink()
            removed[0] += 1
            removed[1] += size
        except OSError:
            pass
    return removed[0], removed[1]


class ResultCache:
    def __init__(self, directory: str | Path, tensorflow: str | None, max_mb: int = DEFAULT_MAX_MB):
        self.directory = Path(directory)
        self.salt = {"xlalint": VERSION, "graph": FORMAT, "tensorflow": tensorflow,
                     "keras": installed_version("keras"), "tf_keras": installed_version("tf-keras"),
                     "python": sys.version.split()[0], "build": build_tag()}
        self.max_bytes = max_mb * 2**20  # 0: no limit
        self._held: int | None = None  # bytes in the directory, counted at the first write
        self._asked: dict[str, float] = {}  # path -> when it was looked up (before its trace)

    def cacheable(self, request: Request) -> bool:
        return not request.get("verify") and not request.get("saved_model")

    def key(self, request: Request) -> str | None:
        """The key of ``request``'s result: the request, the file's content and the versions; None for a file
        that cannot be read."""
        content = file_digest(request["path"])
        if content is None:
            return None
        text = json.dumps([self.salt, request, content], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, request: Request) -> FileResult | None:
        self._asked[request["path"]] = time.time()
        key = self.key(request) if self.cacheable(request) else None
        return self.read(key, lambda result: _valid(result, request["path"])) if key else None

    def put(self, request: Request, result: FileResult) -> None:
        key = self.key(request) if self.cacheable(request) and not result.get("error") else None
        if key:
            self.write(key, request["path"], result.get("deps", []), json.dumps(result),
                       self._asked.get(request["path"], time.time()))

    # What follows stores any result, a trace or a file's analysis (xlalint.engine.analysis_cache), in one folder.

    def read(self, key: str, valid: Callable[[Any], bool]) -> Any:
        """The result stored under ``key``, when its entry is intact, ``valid(result)`` and every dep it recorded
        is unchanged (the entry is then the most recently used); None otherwise."""
        path = self.directory / f"{key}.json"
        try:
            stored = _read_entry(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (stored is None or not isinstance(stored["deps"], dict) or not valid(stored["result"])
                or not all(isinstance(d, (str, type(None))) for d in stored["deps"].values())):
            return None
        if any(file_digest(dep) != digest for dep, digest in stored["deps"].items()):
            return None
        self.touch(key)
        return stored["result"]

    def touch(self, key: str) -> None:
        """Make the entry under ``key``, where there is one, the most recently used (the last the size cap drops)."""
        with contextlib.suppress(OSError):
            os.utime(self.directory / f"{key}.json")

    def write(self, key: str, path: str, deps: list[str], text: str, since: float) -> None:
        """Store ``text`` (a result's JSON) under ``key`` with the digests of ``deps``, unless the checked file
        (``path``) or a dep was written after ``since``, the moment before either was read."""
        if any(_changed_since(f, since) for f in [path, *deps]):
            return
        entry = _entry_text({dep: file_digest(dep) for dep in deps}, text)
        target = self.directory / f"{key}.json"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        except OSError:
            return  # a cache that cannot be written only costs time
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(entry)
                written = out.tell()
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # e.g. the disk is full: leave nothing half-written behind
            return
        self._held = self._held + written if self._held is not None else sum(s for _, s, _ in _files(self.directory))
        if self.max_bytes and self._held > self.max_bytes:
            self._held = self._evict()

    def _evict(self) -> int:
        """Delete least recently used entries until the directory fits; the bytes left."""
        files = sorted(_files(self.directory))
        held = sum(size for _, size, _ in files)
        now = time.time()
        for mtime, size, path in files:
            stale_tmp = path.suffix == ".tmp" and now - mtime > STALE_TMP_S
            if path.suffix == ".json" and held > self.max_bytes or stale_tmp:
                try:
                    path.unlink()
                    held -= size
                except OSError:
                    pass
        return held
