"""One run: files -> tracing (or the cache) -> each entry's findings -> one report."""

from __future__ import annotations

import os
from dataclasses import replace

from xlalint.cache import ResultCache
from xlalint.checks import RULES, xla402_xla_devices_flag, xla801_unused_suppression
from xlalint.coverage import auto_jit_sites, count_ops
from xlalint.entry_findings import NO_GRAPH, autocluster, entry_findings, libcst_source, with_jit_scope_fix
from xlalint.files import collect_files, display_path, file_digest, is_env_file, is_saved_model, precheck
from xlalint.notebooks import in_cells
from xlalint.opgraph import OpGraph
from xlalint.results import Entry, FileError, Finding, Report, one_per_place
from xlalint.saved_graphs import save_entry
from xlalint.settings import Options
from xlalint.sourcemap import Location
from xlalint.suppressions import SuppressionIndex
from xlalint.support import installed_tensorflow, load_support
from xlalint.wire import Request
from xlalint.worker_client import WorkerError, run_worker

SOURCE_CODES = frozenset(code for code, rule in RULES.items() if rule.stage == "source")
NOTHING_FOUND = ("no entry point found: give a tf.function an input_signature, define a Keras model "
                 "(or a zero-argument build_model() returning one), or name a function with specs: "
                 "`xlalint FILE::fn --spec \"float32[8,16]\"`")


def analyze(paths: list[str], options: Options) -> Report:
    """Check ``paths``; per-file problems become ``report.errors``, never exceptions."""
    report = Report(device=options.device)
    files, report.errors = collect_files(paths, options.excluded)
    _record_sources(report.sources, files)
    report.auto_jit = auto_jit_sites(files)
    explicit = set() if options.skip_untraceable else (
        {os.path.abspath(p) for p in paths if os.path.isfile(p)} | set(options.targets))
    requests: list[Request] = []
    suppressions = SuppressionIndex()
    for path in files:
        if is_env_file(path) and not path.endswith(".py"):
            report.findings.extend(f for f in xla402_xla_devices_flag.env_file_findings(path, display_path(path)) if options.keeps(f, suppressions))
            continue
        if is_saved_model(path):
            requests.append({"path": path, "saved_model": True, "targets": [], "discover": True})
            continue
        error, skip = precheck(path, path in explicit)
        if error:
            report.errors.append(FileError(display_path(path), error))
        elif not skip:
            targets = options.targets.get(path, {})
            requests.append({"path": path, "targets": [{"name": n, "specs": s} for n, s in targets.items()],
                             "discover": path not in options.only_named,
                             "verify": options.verify and {"device": None if options.verify == "auto" else options.verify}})
    if not requests:
        return report
    tensorflow = installed_tensorflow()
    cache = ResultCache(options.cache_dir, tensorflow, options.cache_max_mb) if options.cache_dir else None
    results = {r["path"]: cache.get(r) for r in requests} if cache else {}
    missing = [r for r in requests if results.get(r["path"]) is None]
    if missing:
        try:
            if hasattr(options.progress, "expect"):
                options.progress.expect(len(missing))  # "[i/n]" lines need n
            traced = run_worker(missing, options.timeout, options.progress, options.jobs, options.max_memory)
            if hasattr(options.progress, "done"):
                options.progress.done()
        except WorkerError as error:
            message = str(error)
            if "TensorFlow cannot be imported" in message:
                message = ("TensorFlow is not installed or cannot be imported; install it with "
                           f"`pip install 'xlalint[tf]'` or your own TensorFlow build ({message})")
            results.update({r["path"]: {"path": r["path"], "entries": [], "error": message} for r in missing})
            if len(missing) == len(requests):
                tensorflow = None  # nothing was traced, nothing came from the cache
        else:
            tensorflow = traced.tensorflow
            results.update(traced.files)
            for request in missing:
                if cache:
                    cache.put(request, traced.files[request["path"]])
    report.tensorflow = tensorflow
    support = load_support(tensorflow) if tensorflow else None  # only a file with an error has none
    for request in requests:
        _collect_file(report, results[request["path"]], support, options, request["path"] in explicit, suppressions)
        if not request.get("saved_model"):
            report.findings.extend(source_findings(request["path"], options, suppressions))
    for request in requests:  # once every file's findings are in: one may be reported in another's helper
        if not results[request["path"]]["error"] and not request.get("saved_model"):
            report.findings.extend(_unused_suppressions(request["path"], suppressions, options))
    report.findings = in_cells(one_per_place(report.findings))
    report.entries = in_cells(report.entries)
    _record_sources(report.sources, (f.path for f in report.findings))
    return report


def _record_sources(sources: dict[str, str], paths) -> None:
    """SHA-256 of each file's bytes, first as analysis reads it: --fix leaves a file that changed since alone.

    Checked files are hashed before tracing; files only imported (outside the checked paths) when
    their findings are placed."""
    for path in map(os.path.abspath, paths):
        if path not in sources and (digest := file_digest(path)):
            sources[path] = digest


def source_findings(path: str, options: Options, suppressions: SuppressionIndex) -> list[Finding]:
    """XLA107/XLA401/XLA402: what the source says, whatever was traced (the libcst pass, no TensorFlow)."""
    import libcst

    from xlalint.static.api_table import load_table
    from xlalint.static.scan import scan_source

    source = libcst_source(path)
    if source is None:
        return []  # the file's own error is reported by the traced run; a deeply nested one is only traced
    try:
        scan = scan_source(display_path(path), source, load_table(), options.device)
    except (libcst.ParserSyntaxError, RecursionError):
        return []
    return [f for f in scan.findings if f.code in SOURCE_CODES and options.keeps(f, suppressions)]


def _unused_suppressions(path: str, suppressions: SuppressionIndex, options: Options) -> list[Finding]:
    if "XLA801" not in options.select:
        return []
    return xla801_unused_suppression.unused(path, display_path(path), suppressions, options.select)


def static_report(paths: list[str], options: Options) -> Report:
    """``--static``: the libcst pass alone, with the same selection, ignores and suppressions."""
    from xlalint.static import run_static

    sources: dict[str, str] = {}
    files = collect_files(paths, options.excluded)[0]
    _record_sources(sources, files)
    report = run_static(paths, options.device, options.excluded)
    report.auto_jit = auto_jit_sites(files)
    _record_sources(sources, (f.path for f in report.findings))
    report.sources = sources
    suppressions = SuppressionIndex()
    report.findings = [f for f in report.findings if options.keeps(f, suppressions)]
    blocked = {(f.path, f.entry) for f in report.findings if f.severity == "error"}
    report.entries = in_cells([replace(e, verdict="incompatible" if (e.path, e.name) in blocked else "compatible")
                               for e in report.entries])
    report.findings = in_cells(report.findings)
    return report


def _collect_file(report: Report, result: dict, support, options: Options, explicit: bool,
                  suppressions: SuppressionIndex) -> None:
    """Add one file's entries and findings; a file found by a directory scan may have no entry."""
    path = display_path(result["path"])
    if result["error"]:
        report.errors.append(FileError(path, result["error"]))
        return
    if not result["entries"] and explicit:
        report.errors.append(FileError(path, NOTHING_FOUND))
        return
    for raw in result["entries"]:
        def kept(finding: Finding) -> bool:  # also suppressed by a comment on the entry's own line
            return options.keeps(finding, suppressions) and not suppressions.suppressed(
                result["path"], raw["line"], finding.code)

        if raw["graph"] is None:
            report.entries.append(Entry(path, raw["name"], raw["line"], "unknown", raw["error"],
                                        jit_compile=raw.get("jit_compile")))
            if raw.get("keras_layers"):  # what Keras decides needs no trace (XLA301)
                report.findings.extend(
                    f for f in entry_findings(raw, result["path"], support, options, OpGraph(NO_GRAPH)) if kept(f))
            continue
        if options.save_graphs:
            save_entry(options.save_graphs, result["path"], raw, report.tensorflow)
        graph = OpGraph(raw["graph"])
        findings = [f for f in entry_findings(raw, result["path"], support, options, graph) if kept(f)]
        blocked = any(f.severity == "error" for f in findings)
        clusters = None
        if options.mode == "autocluster" or report.auto_jit:  # the share counts in coverage, nowhere else
            predicted = autocluster(graph, support, options, Location(result["path"], raw["line"]))
            report.cluster_shares[(path, raw["name"])] = (predicted["compiled_ops"], predicted["total_ops"])
            if options.mode == "autocluster":
                clusters = predicted
                findings = [with_jit_scope_fix(f) for f in findings]
        report.entries.append(Entry(path, raw["name"], raw["line"], "incompatible" if blocked else "compatible",
                                    verify=raw.get("verify"), autocluster=clusters, ops=count_ops(graph),
                                    jit_compile=raw.get("jit_compile")))
        report.findings.extend(findings)
