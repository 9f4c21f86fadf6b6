"""The command that runs one of xlalint's modules in a child Python, without the working directory on sys.path.

``python -m`` puts the current directory first on ``sys.path``, so a user's ``./json.py`` or
``./numpy.py`` would shadow the real one in every child xlalint starts. These children drop it and
find xlalint where this process found it.
"""

from __future__ import annotations

import os
import sys

import xlalint

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(xlalint.__file__)))
_BOOT = ("import runpy, sys; sys.path.pop(0); sys.path.append({root!r}); "
         "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")


def module_command(module: str, *args: str) -> list[str]:
    """``python -m module args...``, minus the working directory on ``sys.path``."""
    return [sys.executable, "-c", _BOOT.format(root=_ROOT, module=module), *args]
