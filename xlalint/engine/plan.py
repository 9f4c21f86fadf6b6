"""What a run checks and where each answer comes from; the tracing starts here, before the analysis is imported.

``plan_run`` sorts the files (shell scripts and Dockerfiles are only read, Python files and
SavedModels traced), answers what it can from the cache and starts the tracing servers for the
rest at once, so that their TensorFlow import overlaps the parent's own imports (libcst,
the rules: ``xlalint.engine.analysis``). A file whose analysis is stored too (``xlalint.engine.analysis_cache``)
needs neither its trace nor the analysis. ``Plan.answers`` then gives each traced file's result
in the run's order as soon as it and every file before it are in, while later files still trace.
Nothing here imports TensorFlow, libcst or the rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterator

from xlalint.engine.analysis_cache import AnalysisCache, Answer
from xlalint.tracing.cache import ResultCache
from xlalint.inputs.files import collect_files, display_path, is_env_file, is_saved_model, precheck, record_sources
from xlalint.core.results import FileError, Report
from xlalint.settings.table import Options
from xlalint.ci.shards import BEFORE_TRACE, ShardRun
from xlalint.core.support import installed_tensorflow
from xlalint.core.wire import DEFAULT_PATIENCE, IMPORT_SHARE, FileResult, Request, file_result
from xlalint.tracing.workers import Run, WorkerError, start_worker


@dataclass
class Plan:
    """One run's files: the report so far (errors found before tracing), what is read, what is traced."""

    report: Report
    texts: list[str] = field(default_factory=list)  # shell scripts and Dockerfiles: text rules only
    requests: list[Request] = field(default_factory=list)  # Python files and SavedModels, in the run's order
    explicit: set[str] = field(default_factory=set)  # files named on the command line (or as targets)
    cache: ResultCache | None = None
    cached: dict[str, FileResult] = field(default_factory=dict)  # path -> the stored result of an unchanged file
    analyses: AnalysisCache | None = None
    analysed: dict[str, Answer] = field(default_factory=dict)  # path -> the stored analysis of an unchanged file
    tracing: Run | None = None  # the servers checking the other requests

    def answers(self) -> Iterator[tuple[Request, FileResult | None]]:
        """Each request with its result (None: its analysis is in ``analysed``), in the run's order;
        ``report.tensorflow`` is set before each.

        A result waits only for those of the files before it: with ``--jobs`` above 1 files end in
        any order. A cached one waits for the first traced one, which brings the version of the
        TensorFlow that traced (the support table the analysis uses). A server that cannot start
        leaves every file not answered yet with its error."""
        results: dict[str, FileResult | None] = {**self.cached, **dict.fromkeys(self.analysed)}
        done = 0
        by_path = {r["path"]: r for r in self.requests}
        tensorflow = installed_tensorflow() if self.requests else None  # a run answered by the cache alone
        try:
            for path, result, tensorflow in self._traced():
                results[path] = result
                if self.cache:
                    self.cache.put(by_path[path], result)
                while done < len(self.requests) and self.requests[done]["path"] in results:
                    self.report.tensorflow = tensorflow
                    yield self.requests[done], results.pop(self.requests[done]["path"])
                    done += 1
        except WorkerError as error:
            tensorflow = (self.tracing and self.tracing.tensorflow) or (  # no server started: no version seen
                installed_tensorflow() if self.cached or self.analysed else None)
            results.update({r["path"]: file_result(r["path"], _not_traced(error))
                            for r in self.requests[done:] if r["path"] not in results})
        finally:
            self.close()
        self.report.tensorflow = tensorflow
        for request in self.requests[done:]:
            yield request, results[request["path"]]

    def _traced(self) -> Iterator[tuple[str, FileResult, str | None]]:
        """``(path, result, the tracing TensorFlow's version)`` of each traced file, as it ends; then
        the progress lines of the last files."""
        tracing = self.tracing
        if tracing is None:
            return
        for path, result in tracing.answers():
            yield path, result, tracing.tensorflow
        if hasattr(tracing.progress, "done"):
            tracing.progress.done()

    def close(self) -> None:
        """Stop the tracing, whatever is left of it (on an interrupt too)."""
        if self.tracing:
            self.tracing.close()
            self.tracing = None

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def plan_run(paths: list[str], options: Options, tracer: Callable[..., Run] = start_worker) -> Plan:
    """Sort the files of ``paths``, read the cache and start tracing the rest (``with plan_run(...)``) with
    ``tracer`` (``start_worker``'s signature; a warm server's ``start``: ``xlalint.tracing.warm``)."""
    report = Report(device=options.device)
    files, report.errors = collect_files(paths, options.excluded)
    files = ShardRun.start(report, files, options.shard, options.root)
    record_sources(report.sources, files)
    plan = Plan(report, explicit=set() if options.skip_untraceable else (
        {os.path.abspath(p) for p in paths if os.path.isfile(p)} | set(options.targets)))
    for path in files:
        if is_env_file(path) and not path.endswith(".py"):
            plan.texts.append(path)
        elif is_saved_model(path):
            plan.requests.append({"path": path, "saved_model": True, "targets": [], "discover": True})
        else:
            error, skip = precheck(path, path in plan.explicit)
            if error:
                report.errors.append(FileError(display_path(path), error))
            elif not skip:
                plan.requests.append(_request(path, options))
    if report.shard:
        report.shard.errors(report.errors, BEFORE_TRACE)
    if plan.requests and options.cache_dir:
        plan.cache = ResultCache(options.cache_dir, installed_tensorflow(), options.cache_max_mb)
        plan.analyses = AnalysisCache(plan.cache, options, plan.explicit)
        plan.analysed = {r["path"]: answer for r in plan.requests if (answer := plan.analyses.get(r)) is not None}
        plan.cached = {r["path"]: hit for r in plan.requests
                       if r["path"] not in plan.analysed and (hit := plan.cache.get(r)) is not None}
    missing = [r for r in plan.requests if r["path"] not in plan.cached and r["path"] not in plan.analysed]
    if missing:
        if hasattr(options.progress, "expect"):
            options.progress.expect(len(missing))  # "[i/n]" lines need n
        plan.tracing = tracer(missing, options.timeout, options.progress, options.jobs, options.max_memory)
    return plan


def _request(path: str, options: Options) -> Request:
    """What the tracing server is asked about a Python file."""
    targets = options.targets.get(path, {})
    return {"path": path, "targets": [{"name": n, "specs": s} for n, s in targets.items()],
            "discover": path not in options.only_named, "patience": DEFAULT_PATIENCE,
            "import_budget": options.timeout * IMPORT_SHARE,
            "verify": {"device": None if options.verify == "auto" else options.verify} if options.verify else None}


def _not_traced(error: WorkerError) -> str:
    """A file's error when no server could trace it."""
    message = str(error)
    if "TensorFlow cannot be imported" in message:
        return ("TensorFlow is not installed or cannot be imported; install it with "
                f"`pip install 'xlalint[tf]'` or your own TensorFlow build ({message})")
    return message
