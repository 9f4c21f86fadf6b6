"""The file in which a tracing child hands its result to the parent: ``marshal``, not JSON.

The result is a tree of dicts, lists, strings, numbers, booleans and None; ``marshal`` writes and
reads it several times faster than ``json`` (a ResNet50 training step's 8,477 op records: 14 ms
against 0.17 s to write, 38 ms against 67 ms to read) and in two thirds of the bytes. It is safe to
load here: the file lies in the run's own temporary folder (``tempfile.mkdtemp``: readable and
writable by this user only), it is written by a child of the parent's own interpreter (the server is
started with the parent's ``sys.executable``, so both sides have the same marshal format), whole or
not at all (written aside, then renamed), and loading marshal data never runs code. Unlike JSON,
a record the child shares (a Keras layer's, shared by the layer's ops) comes back shared: equal, and
no part of the parent changes a record. Caches and saved graphs stay JSON: they outlive the run and
other interpreters read them.
"""

from __future__ import annotations

import json
import marshal
import os
from typing import cast

from xlalint.core.gc_pause import gc_paused
from xlalint.core.wire import FileResult


def write_result(path: str, result: FileResult) -> None:
    """Write ``result`` to ``path``, whole or not at all. The parent reads back what JSON would give only
    because records hold JSON's types alone (lists, not tuples; string keys), as ``wire`` requires and
    tests/test_result_file.py checks on real results: marshal would keep a tuple a tuple."""
    try:
        data = marshal.dumps(cast(dict, result))
    except ValueError:  # a subclass of a JSON type (a NumPy float...): as JSON writes it, its base value
        data = marshal.dumps(json.loads(json.dumps(result)))
    write_whole(path, data)


def write_whole(path: str, data: bytes) -> None:
    """Write ``data`` aside, then rename it to ``path``: a reader finds the old file or the new one, never half."""
    part = aside(path)
    with open(part, "wb") as out:
        out.write(data)
    os.replace(part, path)


def aside(path: str) -> str:
    """Where ``write_whole`` writes ``path``'s data before renaming it (left there by a writer killed meanwhile)."""
    return f"{path}.part"


def read_result(path: str) -> FileResult:
    """The result written to ``path``; ``OSError`` where there is none, ``ValueError`` where it is not one."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        with gc_paused():  # thousands of acyclic records: a collection would only walk them
            result = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as error:
        raise ValueError(f"{path} holds no whole result: {error}") from None
    if not isinstance(result, dict):
        raise ValueError(f"{path} holds a {type(result).__name__}, not a file's result")
    return cast(FileResult, result)
