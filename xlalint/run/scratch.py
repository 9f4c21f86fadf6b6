"""The scratch working directory of ``xlalint run``: the user's tree, mirrored with links.

Folders are real, files are symbolic links to the user's files: the script reads its data
where it expects it, and whatever it writes by a relative path (checkpoints, logs, a saved
model, also from TensorFlow's C++ code) lands in the scratch folder, which is removed after
the run. Writing to an existing file first replaces its link with a copy (``run_guard``).
"""

from __future__ import annotations

import os
import shutil
import tempfile

MAX_ENTRIES = 50_000  # a working directory bigger than this is not mirrored
SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", "node_modules"})


class ScratchError(RuntimeError):
    """The working directory cannot be mirrored (too big)."""


def make_scratch(source: str) -> str:
    """A fresh folder mirroring ``source``; the caller removes it with ``remove_scratch``."""
    scratch = tempfile.mkdtemp(prefix="xlalint-run-")
    count = 0
    try:
        for folder, dirs, files in os.walk(source):
            dirs[:] = [d for d in dirs if d not in SKIPPED and not os.path.islink(os.path.join(folder, d))
                       and os.path.realpath(os.path.join(folder, d)) != os.path.realpath(scratch)]
            target = os.path.join(scratch, os.path.relpath(folder, source))
            os.makedirs(target, exist_ok=True)
            for name in files + [d for d in os.listdir(folder) if os.path.islink(os.path.join(folder, d))
                                 and os.path.isdir(os.path.join(folder, d))]:
                count += 1
                if count > MAX_ENTRIES:
                    raise ScratchError(f"the working directory holds more than {MAX_ENTRIES} files: run "
                                       "`xlalint run` from the script's own folder")
                os.symlink(os.path.realpath(os.path.join(folder, name)), os.path.join(target, name))
    except BaseException:
        remove_scratch(scratch)
        raise
    return scratch


def remove_scratch(scratch: str) -> None:
    shutil.rmtree(scratch, ignore_errors=True)
