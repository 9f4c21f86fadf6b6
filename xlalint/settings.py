"""Every run setting in one place: its choices and its default.

The command line, ``[tool.xlalint]`` and the Python API all fill one ``Options``; a setting
nobody gives keeps the default written here.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from typing import Callable

from xlalint.cache import DEFAULT_MAX_MB

DEVICES = ("cpu", "gpu", "tpu")  # target XLA devices (tpu: approximate tables)
DEFAULT_DEVICE = "gpu"
MODES = ("auto", "jit", "autocluster")  # auto: the mode each entry's program runs it in
VERIFY_DEVICES = ("auto", "cpu", "gpu")  # auto: the GPU when there is one, else the CPU


def every_code() -> tuple[str, ...]:
    from xlalint.checks import RULES  # the rules need the support tables, which need DEVICES from here

    return tuple(RULES)


@dataclass
class Options:
    """Every setting of a run, with its default: flags and [tool.xlalint] override these."""

    device: str = DEFAULT_DEVICE
    timeout: float = 120.0
    max_memory: int = 8192  # MB of resident memory per tracing worker; 0: no limit
    select: tuple[str, ...] = field(default_factory=every_code)  # rule codes to report
    targets: dict[str, dict[str, list[str] | None]] = field(default_factory=dict)  # path -> name -> specs
    only_named: set[str] = field(default_factory=set)  # files given only as FILE::NAME: no discovery
    save_graphs: str | None = None  # directory for each traced entry's op graph (JSON)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # glob (from root) -> code prefixes
    root: str = "."  # where per-file-ignores and exclude globs start (the config file's directory)
    exclude: tuple[str, ...] = ()  # globs (from root) of files not to check, e.g. "*.ipynb"
    skip_untraceable: bool = False  # named files without TensorFlow or entry points are skipped quietly
    progress: Callable[[str], None] | None = None  # told each file as tracing starts
    verify: str | None = None  # one of VERIFY_DEVICES: also compile and run each entry there
    cache_dir: str | None = None  # where per-file results are cached; None: no cache
    cache_max_mb: int = DEFAULT_MAX_MB  # least recently used results go beyond this; 0: no limit
    jobs: int = 1  # tracing workers run in parallel
    mode: str = "auto"  # per entry, as its program runs it; "jit": as if jit_compile=True; "autocluster": forced

    def excluded(self, path: str) -> bool:
        rel = os.path.relpath(os.path.abspath(path), self.root)
        return any(fnmatch.fnmatch(rel, glob) for glob in self.exclude)
