"""Which files a fix may write: inside the checked paths, writable, and unchanged since analysis."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from xlalint.inputs.files import display_path

CHANGED = "changed since it was analysed; run again"


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


@dataclass
class Guard:
    roots: list[str] | None = None  # the paths given on the command line; None: any file
    sources: dict[str, str] | None = None  # absolute path -> SHA-256 analysis saw; None: no check

    def refusal(self, paths: set[str], real: str) -> str | None:
        """Why the file ``real``, found as ``paths``, must not be written (None: it may)."""
        if self.roots is not None:
            if not all(_inside(os.path.abspath(p), [os.path.abspath(r) for r in self.roots]) for p in paths):
                return "outside the paths given on the command line (--fix-outside allows it)"
            if not _inside(real, [os.path.realpath(r) for r in self.roots]):
                return f"a symbolic link to {display_path(real)}, which is outside the checked paths"
        if not os.stat(real).st_mode & 0o222 or not os.access(real, os.W_OK):
            return "the file is read-only"
        return None

    def changed(self, paths: set[str], data: bytes) -> bool:
        """Whether ``data`` differs from the bytes analysis read under any of ``paths``."""
        if self.sources is None:
            return False
        digest = hashlib.sha256(data).hexdigest()
        return any(self.sources.get(os.path.abspath(p)) != digest for p in paths)
