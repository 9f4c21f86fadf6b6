"""The two checks of an open document: ``--static`` on the editor's text as it changes, the full analysis of the
saved file on a warm tracing server; each with the settings of the ``[tool.xlalint]`` above the file."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable

from xlalint.core.results import FileError, Finding, Report
from xlalint.core.support import cache_dir
from xlalint.engine.analysis import analyze, static_report
from xlalint.engine.plan import plan_run
from xlalint.lsp.documents import Buffer
from xlalint.settings import table as settings
from xlalint.settings.config import config_targets, find_config, load_config
from xlalint.settings.table import Options
from xlalint.tracing.warm import WarmServer
from xlalint.tracing.workers import Run


def options_for(path: str) -> Options:
    """The settings a check of ``path`` from the command line would have without flags: its ``[tool.xlalint]``,
    else the defaults, with the result cache on. Raises ``ConfigError``."""
    config = load_config(find_config([path]))
    values = settings.merge({}, config.values)
    values["cache_dir"] = values["cache_dir"] or str(cache_dir() / "results")
    return replace(settings.options(values, root=str(config.root)), targets=config_targets(config))


def static_check(buffer: Buffer, options: Options) -> Report:
    """``xlalint --static`` of the buffer's text (saved or not)."""
    return static_report([buffer.path], options, {buffer.path: buffer.source})


def full_check(buffer: Buffer, options: Options, warm: WarmServer, started: Callable[[Run], None]) -> Report:
    """``xlalint FILE`` of the saved file, traced on ``warm``; ``started`` is handed the run (to cancel it)."""

    def tracer(*args, **kwargs) -> Run:
        run = warm.start(*args, **kwargs)
        started(run)
        return run

    with plan_run([buffer.path], options, tracer) as plan:
        return analyze(plan, options)


def own(report: Report, buffer: Buffer) -> tuple[list[Finding], list[FileError]]:
    """The report's findings and errors in the buffer's file."""
    mine = [f for f in report.findings if os.path.abspath(f.path) == buffer.path]
    return mine, [e for e in report.errors if os.path.abspath(e.path) == buffer.path]
