"""Output formats: one emitter per format, each a function ``Report -> str``. No analysis here.

``EMITTERS`` maps each format to its emitter, imported on first use: the command line names the
formats before a run, and imports the emitters (and through them the rules) only to print it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from importlib import import_module

from xlalint.core.results import Report

MODULES = {"text": "text", "concise": "concise", "json": "json_format", "github": "github",
           "sarif": "sarif", "gitlab": "gitlab"}  # format -> module of xlalint.report


class _Emitters(Mapping[str, Callable[[Report], str]]):
    def __getitem__(self, name: str) -> Callable[[Report], str]:
        return import_module(f"xlalint.report.{MODULES[name]}").emit

    def __iter__(self) -> Iterator[str]:
        return iter(MODULES)

    def __len__(self) -> int:
        return len(MODULES)


EMITTERS = _Emitters()
