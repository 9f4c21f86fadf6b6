"""xlalint's own files, as a digest: what a stored answer or a running server must have been made with."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=None)
def code_digest() -> str:
    """Each file of the package (its code and tables): its path in the package, size and modification time, read
    once per process (the code a process runs is the code it started with)."""
    digest = hashlib.sha256()
    for folder, folders, names in os.walk(PACKAGE):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(names):
            path = os.path.join(folder, name)
            info = os.stat(path)
            digest.update(f"{os.path.relpath(path, PACKAGE)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()
