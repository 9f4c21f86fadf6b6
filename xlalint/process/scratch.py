"""The scratch working directory of user code that xlalint runs: the user's tree, mirrored with links.

Folders are real, files are symbolic links to the user's files: the script reads its data
where it expects it, and whatever it writes by a relative path (checkpoints, logs, a saved
model, also from TensorFlow's C++ code) lands in the scratch folder, which is removed after
the run. Writing to an existing file first replaces its link with a copy (``backend/run/guard.py``).

``xlalint run`` mirrors the whole tree. The check command, which runs every file's top level,
mirrors only the top folder (its subfolders as links too) and the guard makes a linked folder
real, one level at a time, before anything is written below it (``materialize``): a file that
writes nothing costs one folder listing.
"""

from __future__ import annotations

import os
import shutil
import tempfile

MAX_ENTRIES = 50_000  # a working directory bigger than this is not mirrored
SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", "node_modules"})


class ScratchError(RuntimeError):
    """The working directory cannot be mirrored (too big)."""


def make_scratch(source: str, lazy: bool = False) -> str:
    """A fresh folder mirroring ``source``; the caller removes it with ``remove_scratch``. ``lazy``: its top
    level only, folders as links (``materialize`` makes them real where something is written)."""
    scratch = tempfile.mkdtemp(prefix="xlalint-run-")
    if lazy:
        _link_entries(source, scratch)
        return scratch
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


def _link_entries(source: str, target: str) -> None:
    """A link in ``target`` to each entry of the folder ``source`` (folders too)."""
    for name in os.listdir(source):
        if name not in SKIPPED:
            os.symlink(os.path.realpath(os.path.join(source, name)), os.path.join(target, name))


def materialize(scratch: str, path: str) -> None:
    """Make each linked folder on the way from ``scratch`` to ``path`` (a path below it) a real folder whose
    entries link to the linked folder's: what is then written at ``path`` stays in the scratch folder."""
    folder = scratch
    for part in os.path.relpath(path, scratch).split(os.sep)[:-1]:
        folder = os.path.join(folder, part)
        if os.path.islink(folder) and os.path.isdir(folder):
            target = os.path.realpath(folder)
            os.unlink(folder)
            os.mkdir(folder)
            _link_entries(target, folder)


def mirrored_folder(scratch: str, source: str, folder: str) -> str | None:
    """The folder of ``scratch`` (the mirror of ``source``) that mirrors ``folder``, made real where a lazy
    mirror has a link; None where ``folder`` is not inside ``source``."""
    if os.path.commonpath([folder, source]) != source:
        return None
    mirrored = os.path.normpath(os.path.join(scratch, os.path.relpath(folder, source)))
    materialize(scratch, os.path.join(mirrored, "-"))
    return mirrored if os.path.isdir(mirrored) else None


def remove_scratch(scratch: str) -> None:
    shutil.rmtree(scratch, ignore_errors=True)
