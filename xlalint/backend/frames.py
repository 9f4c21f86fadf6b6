"""Tell the user's own source frames from library and generated ones."""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from functools import lru_cache

import xlalint

_LIBRARY_ROOTS = tuple(
    sorted(
        {
            os.path.realpath(p) + os.sep
            for p in [
                sys.prefix,
                sys.base_prefix,
                sys.exec_prefix,
                *site.getsitepackages(),
                site.getusersitepackages(),
                sysconfig.get_paths()["stdlib"],
                os.path.dirname(xlalint.__file__),
            ]
            if p
        }
    )
)


@lru_cache(maxsize=None)
def is_user_file(filename: str) -> bool:
    """True for a real source file outside Python, site-packages and xlalint (cached: a graph has
    tens of thousands of frames from a few dozen files)."""
    if not filename or filename.startswith("<") or "__autograph_generated_file" in filename:
        return False
    real = os.path.realpath(filename)
    return not real.startswith(_LIBRARY_ROOTS) and os.path.isfile(real)


_realpath = lru_cache(maxsize=None)(os.path.realpath)


def user_frames(frames) -> list[list]:
    """``[[file, line, function], ...]`` of the user frames, outermost first."""
    return [
        [_realpath(f.filename), f.lineno, getattr(f, "name", "")]
        for f in frames or ()
        if is_user_file(f.filename)
    ]
