"""The tracing server: import TensorFlow once, then check each user file in a fresh forked child.

Started as ``worker [LIBRARY...]``: the optional libraries to import before forking
(``xlalint.tracing.preload_plan``). Each request (one JSON line on stdin, the messages as in
``fork_server``) names the file, what to trace, and where to write its result and its output.
The child writes the file's result to the request's result path; the user's prints go to its log.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import time
import traceback

from xlalint.backend.fork_server import import_tensorflow, open_channel, ready, redirect_output, serve
from xlalint.backend.frames import is_user_file
from xlalint.backend.preload import CHECK_MODULES
from xlalint.inputs.files import read_source, show_paths_from
from xlalint.inputs.notebooks import is_notebook, place_of, remember_source
from xlalint.process.result_file import write_result
from xlalint.process.scratch import remove_scratch
from xlalint.core.specs import parse_spec
from xlalint.core.wire import (DEFAULT_PATIENCE, IMPORT_SHARE, EntryRecord, FileResult, Request, entry_record,
                               file_result)


def _where(error: BaseException, path: str) -> str:
    """``" (line N)"`` for the innermost frame of the user's file in a traceback."""
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == path and f.lineno]
    if not lines:
        return ""
    cell = place_of(path, lines[-1])
    return f" (cell {cell['cell']}, line {cell['line']})" if cell else f" (line {lines[-1]})"


class _NotebookLoader(importlib.abc.SourceLoader):
    """Imports a notebook as its module (xlalint.inputs.notebooks); frames and tracebacks name the notebook."""

    def __init__(self, path: str, source: str):
        self.path, self.source = path, source
        remember_source(path, source)  # inspect (AutoGraph, discovery) reads lines through linecache

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_data(self, path: str) -> bytes:
        return self.source.encode("utf-8")


class ImportStopped(Exception):
    """The harness stopped the import with nothing to show for it: the message is the file's error."""


class ImportFailed(Exception):
    """The module raised while imported (``error``), maybe after a compiled function answered it with zeros."""

    def __init__(self, error: Exception, zeros_from: str | None):
        super().__init__(error)
        self.error, self.zeros_from = error, zeros_from


def _user_module(path: str, source: str):
    """The user's module and its loader, made but not run (its name its file's, unless that is taken)."""
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else f"_xlalint_user_{abs(hash(path))}"
    loader = _NotebookLoader(path, source) if is_notebook(path) else None
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None and spec.loader is not None  # a file path always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, directory)
    if loader is not None:  # a notebook: Jupyter's kernel also imports from its working directory, as it is then
        sys.path.insert(1, "")
    sys.modules[name] = module
    return module, spec.loader


def _harness(request: Request, recorder, scratches: list[str]):
    """The harness of ``xlalint run`` (capture, guard), installed for this file's import: the child then
    works in a scratch mirror of the user's folder (added to ``scratches``), names files as from that
    folder, and writes nothing into the user's tree or the file's own folder."""
    from xlalint.backend.run.harness import Harness
    from xlalint.process.scratch import make_scratch, mirrored_folder

    here = os.path.realpath(os.getcwd())
    scratch = make_scratch(here, lazy=True)
    scratches.append(scratch)
    harness = Harness(recorder, scratch, [here, os.path.dirname(os.path.realpath(request["path"]))],
                      [os.path.dirname(request["result"])], request.get("patience", DEFAULT_PATIENCE),
                      request.get("first_step", False))
    show_paths_from(here)
    folder = os.path.dirname(os.path.realpath(request["path"]))  # Jupyter runs a notebook in its own folder
    os.chdir((is_notebook(request["path"]) and mirrored_folder(scratch, here, folder)) or scratch)
    sys.dont_write_bytecode = True  # no __pycache__ in the user's folders
    harness.install()
    return harness


def _import_user_module(path: str, source: str, request: Request, recorder, scratches: list[str]):
    """``(module, harness)``: the module imported (its top level run up to where the harness stopped it),
    and the harness that captured what it compiled; raises what the import raised."""
    from xlalint.backend.run.guard import RunStop

    harness = _harness(request, recorder, scratches)
    module, loader = _user_module(path, source)
    sys.argv = [path]  # as `python FILE` gives it: a script parsing its arguments at import sees none
    budget = request.get("import_budget")
    try:
        with harness.budget(budget, "the import ran out of its budget"):
            loader.exec_module(module)
    except Exception as error:
        if not harness.capture.loops_left:
            raise ImportFailed(error, harness.capture.zeros_from) from error
        # the code after a loop the capture left failed on what the loop would have made: not the module's error
    except RunStop as stop:  # a training loop ended by the capture, or the budget, or the network
        if stop.args[2] == "network":
            raise ImportStopped(stop.args[0]) from stop
        if stop.args[2] == "budget" and not harness.capture.records:
            raise ImportStopped(f"timed out after {budget:g}s while importing{_where(stop, path)} (see --timeout: "
                                f"the import may take {IMPORT_SHARE:.0%} of it, the rest is for tracing)") from stop
    finally:
        harness.capture.active = False  # xlalint's own traces from here on
    return module, harness


def _trace_entries(module, source: str, request: Request, recorder, capture) -> list[EntryRecord]:
    """Every entry of the file: what discovery finds, in its order, then what the import captured (each
    compiled function once: the capture, on the real arguments, wins); a discovered model that another
    entry's successful trace called is checked as part of that entry (``xlalint.backend.covered_models``)."""
    from xlalint.backend.covered_models import is_forward, trace_order, without_covered
    from xlalint.backend.entry import traced_entry
    from xlalint.backend.discover import discover, without_called_helpers
    from xlalint.backend.train_steps import with_train_steps

    targets = {t["name"]: ([parse_spec(s) for s in specs] if (specs := t.get("specs")) else None)
               for t in request.get("targets", [])}
    own_file = os.path.realpath(request["path"])
    captured = [r for r in capture.records if r.get("path") == own_file]  # a helper module's: its own check
    lines = {r["line"] for r in captured}  # a function's def line, as discovery gives it

    def captured_already(candidate) -> bool:
        if candidate.kind == "keras-fit":
            return capture.captured(candidate.model or candidate.legacy_model)
        return candidate.kind in ("tf.function", "function", "model-wrapper") and candidate.line in lines

    candidates = [c for c in with_train_steps(discover(module, source, targets, request["discover"]),
                                              recorder.site_of, recorder.compiled) if not captured_already(c)]
    records: dict[int, EntryRecord] = {}
    callers: dict[int, int] = {}  # id of a layer or model a successful trace called -> that candidate's index
    covering: dict[int, int] = {}  # index of a covered model's candidate -> index of the entry that called it
    for index in trace_order(candidates, set(targets)):
        candidate = candidates[index]
        caller = callers.get(id(candidate.model)) if is_forward(candidate, set(targets)) else None
        if caller is not None:
            covering[index] = caller
        recorder.called.clear()
        records[index] = traced_entry(candidate, recorder, caller is None, request.get("verify"))
        if records[index]["graph"] is not None:
            for called in recorder.called:
                callers.setdefault(called, index)
    entries = [records[index] for index in range(len(candidates))]
    kept = [candidate for index, candidate in enumerate(candidates) if index not in covering]
    return without_called_helpers(kept, without_covered(entries, covering), captured) + captured


# Lines of a TensorFlow runtime error that come before what went wrong (a graph that XLA failed to compile
# at import, e.g. a script that trains at module level): "Graph execution error:", then per node
# "Detected at node X defined at (most recent call last):" with its stack or "<stack traces unavailable>".
_TF_PREAMBLE = ("Graph execution error:", "Detected at node ", "<stack traces unavailable>", 'File "')


def _first_line(error: BaseException) -> str:
    """The error's first line that says what went wrong (TensorFlow's preamble skipped)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    telling = [line for line in lines if not line.startswith(_TF_PREAMBLE)]
    return (telling or lines or [""])[0]


def _trace_saved_model(path: str) -> list[EntryRecord]:
    """One entry per serving signature; a SavedModel has no source, so no frames."""
    import tensorflow as tf

    from xlalint.backend.discover import spec_json
    from xlalint.backend.graph_export import export_graph

    loaded = tf.saved_model.load(path)
    entries = []
    for key, concrete in sorted(loaded.signatures.items()):
        specs = tf.nest.flatten(concrete.structured_input_signature)
        entries.append(entry_record(key, 1, "saved-model-signature", None, [spec_json(s) for s in specs],
                                    graph=export_graph(concrete, len(specs), lambda graph, op_name: None)))
    return entries


def _opened_files_hook(opened: set[str]):
    """An audit hook collecting every path the process opens: a data file read at import is a dependency."""
    def hook(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], str):
            opened.add(args[0])
    return hook


def _dependencies(opened: set[str], exclude: str) -> list[str]:
    """The user's own files this check read: its modules and whatever they opened (a safe superset)."""
    files = {getattr(m, "__file__", None) for m in list(sys.modules.values())} | opened
    real = {os.path.realpath(f) for f in files if f and is_user_file(f)}
    return sorted(f for f in real if not f.startswith(exclude))


def check_file(request: Request, recorder) -> FileResult:
    """Trace one file; ``deps`` lists every user file it loaded or opened by then (read through the scratch
    mirror's links, so the mirror the import ran in is removed only then, with what the import wrote there).
    Returns in the working directory it was called in."""
    started = time.perf_counter()
    opened: set[str] = set()
    sys.addaudithook(_opened_files_hook(opened))  # this process checks one file only: the hook dies with it
    scratches: list[str] = []  # the mirror the import ran in, once made (``_harness``)
    folder = os.getcwd()  # the import works in that mirror: the caller gets its own folder back
    try:
        result = _check_file(request, recorder, scratches)
        result["deps"] = _dependencies(opened, os.path.dirname(request["result"]))
    finally:
        os.chdir(folder)
    for scratch in scratches:
        remove_scratch(scratch)
    result["seconds"] = time.perf_counter() - started
    return result


def _check_file(request: Request, recorder, scratches: list[str]) -> FileResult:
    path = request["path"]
    result = file_result(path)
    if request.get("saved_model"):
        try:
            result["entries"] = _trace_saved_model(path)
        except Exception as error:
            result["error"] = f"loading the SavedModel failed: {type(error).__name__}: {_first_line(error)}"
        return result
    try:
        source, unreadable = read_source(path)  # without a byte-order mark, as Python's import reads it
        if unreadable:
            result["error"] = unreadable
            return result
        module, harness = _import_user_module(path, source, request, recorder, scratches)
    except ImportStopped as error:
        result["error"] = str(error)
        return result
    except SystemExit as error:
        result["error"] = f"the module called sys.exit({error.code!r}) while being imported{_where(error, path)}"
        return result
    except Exception as failure:  # the module's own error (``ImportFailed``), or making its mirror failed
        raised = failure.error if isinstance(failure, ImportFailed) else failure
        result["error"] = (f"importing the module raised {type(raised).__name__}: "
                           f"{_first_line(raised)}{_where(raised, path)}")
        result["zeros_from"] = failure.zeros_from if isinstance(failure, ImportFailed) else None
        return result
    try:
        result["entries"] = _trace_entries(module, source, request, recorder, harness.capture)
    except SystemExit as error:
        result["error"] = f"the module called sys.exit({error.code!r}) while being traced{_where(error, path)}"
    except Exception as error:
        result["error"] = f"discovery failed: {type(error).__name__}: {_first_line(error)}{_where(error, path)}"
    return result


def _check_in_this_process(request: Request, recorder) -> None:
    """Run one file's check here, its output to the file's log, its answer to the result file."""
    me = os.getpid()
    redirect_output(request["log"])
    result = check_file(request, recorder)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.getpid() == me:  # a process the module forked returns here too: only the checker answers
        write_result(request["result"], result)


def main() -> None:
    """Import TensorFlow once, then check each requested file in a fresh forked child (``fork_server``)."""
    channel = open_channel()
    from xlalint.backend.keras_sites import LayerRecorder

    recorder = LayerRecorder()
    started = time.perf_counter()
    versions = import_tensorflow(channel, ("xlalint.backend.discover",))  # once here, not once per file
    if versions is None:
        return
    recorder.install()
    fork = ready(channel, versions, started, sys.argv[1:], CHECK_MODULES)
    serve(channel, lambda request: _check_in_this_process(request, recorder), fork)


if __name__ == "__main__":
    main()
