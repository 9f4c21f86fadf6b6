"""``xlalint server``: the language server (LSP over stdio, on pygls).

- open and change: ``--static`` findings of the editor's text, saved or not (no TensorFlow);
- save: the full findings of the saved file, traced on one warm tracing server (``xlalint.tracing.warm``:
  TensorFlow imported once per session, each check a fresh child, the file's import under the run guard),
  with ``$/progress`` while it runs; then what the ``[tool.xlalint] run`` commands that reach the file capture
  in it (``xlalint run``, in the background);
- a newer change or save makes older work stale: its result is dropped, and a running trace is killed;
- code actions (fixes as ``--fix`` makes them, "suppress on this line", fix all), hover (hint, XLA mode);
- notebooks through notebook document sync, each diagnostic in its cell;
- ``[tool.xlalint]`` read for every check, and open documents checked again when a pyproject.toml changes;
- the warm server offered to ``xlalint FILE`` run on the workspace's files (``xlalint.tracing.shared``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from xlalint.core.results import Entry, FileError, Finding, one_per_place
from xlalint.lsp import actions, checks, listed
from xlalint.lsp.diagnostics import diagnostics, line_range
from xlalint.lsp.documents import Buffer
from xlalint.lsp.hover import hover_text
from xlalint.settings.config import ConfigError
from xlalint.tracing.shared import SharedServer
from xlalint.tracing.warm import WarmServer
from xlalint.tracing.workers import Run, WorkerError
from xlalint.version import VERSION

CONFIG_FILE = "pyproject.toml"
PROGRESS_WAIT_S = 2.0  # for the client to accept a progress token
PYTHON_NOTEBOOKS = types.NotebookDocumentSyncOptions(
    [types.NotebookDocumentFilterWithCells([types.NotebookCellLanguage("python")], notebook="*")], save=True)


@dataclass
class State:
    """What the server knows of one open buffer."""

    version: int = 0  # bumped by each change and save: work started for an older one is stale
    findings: list[Finding] = field(default_factory=list)  # as last published
    entries: list[Entry] = field(default_factory=list)
    running: Run | None = None  # the full check under way
    processes: list[asyncio.subprocess.Process] = field(default_factory=list)  # listed commands' runs
    static_busy: bool = False


class XlalintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("xlalint", VERSION, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=PYTHON_NOTEBOOKS)
        self.warm = WarmServer()
        self.shared: SharedServer | None = None
        self.states: dict[str, State] = {}
        self.tokens = itertools.count(1)

    def close(self) -> None:
        """The session's end: no more command-line checks, the warm server and its child gone."""
        if self.shared is not None:
            self.shared.close()
        self.warm.close()

    def buffer(self, key: str) -> Buffer | None:
        """The open Python file or notebook of a document or notebook URI (a cell's URI gives its notebook)."""
        notebook = (self.workspace.get_notebook_document(notebook_uri=key)
                    or self.workspace.get_notebook_document(cell_uri=key))
        if notebook is not None:
            cells = [(c.document, self.workspace.get_text_document(c.document).source) for c in notebook.cells
                     if c.kind == types.NotebookCellKind.Code]
            return Buffer.notebook(notebook.uri, to_fs_path(notebook.uri) or notebook.uri, cells) if cells else None
        if key not in self.states:
            return None
        document = self.workspace.get_text_document(key)
        return Buffer.text(key, document.path, document.source)

    def stale(self, key: str) -> State:
        """The buffer changed: its state, with older work stale and any full check stopped."""
        state = self.states.setdefault(key, State())
        state.version += 1
        if state.running is not None:
            state.running.close()
        for process in state.processes:  # a listed command's run: its server dies with it
            if process.returncode is None:
                process.kill()
        state.processes.clear()
        return state

    def publish(self, buffer: Buffer, findings: list[Finding], errors: list[FileError], entries: list[Entry]) -> None:
        """The buffer's diagnostics, each document's with the version checked (none has changed since)."""
        state = self.states[buffer.key]
        state.findings, state.entries = findings, entries
        for uri, found in diagnostics(buffer, findings, errors).items():
            version = self.workspace.get_text_document(uri).version
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, found, version))

    def options(self, buffer: Buffer):
        """The buffer's settings, or the error of its ``[tool.xlalint]``, published on it."""
        try:
            return checks.options_for(buffer.path)
        except ConfigError as error:
            self.publish(buffer, [], [FileError(buffer.path, str(error))], [])
            return None

    async def check_static(self, key: str) -> None:
        """``--static`` of the buffer as it is now; a check under way for an older text is followed by this one."""
        state = self.states[key]
        if state.static_busy:
            return  # the check under way sees the newer version when it ends, and runs again
        state.static_busy = True
        try:
            while (buffer := self.buffer(key)) is not None:
                version = state.version
                options = self.options(buffer)
                if options is None:
                    return
                report = await asyncio.to_thread(checks.static_check, buffer, options)
                if state.version == version:
                    self.publish(buffer, *checks.own(report, buffer), report.entries)
                    return
        finally:
            state.static_busy = False

    async def check_saved(self, key: str) -> None:
        """The full findings of the saved file, when no newer change or save came meanwhile."""
        buffer, state = self.buffer(key), self.states[key]
        options = None if buffer is None else self.options(buffer)
        if buffer is None or options is None:
            return
        version = state.version

        def started(run: Run) -> None:
            state.running = run

        async with Progress(self, f"tracing {os.path.basename(buffer.path)}"):
            try:
                report = await asyncio.to_thread(checks.full_check, buffer, options, self.warm, started)
            except WorkerError as error:
                self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"xlalint: {error}"))
                return
            finally:
                state.running = None
        if state.version != version or self.buffer(key) != buffer:  # the editor's text is not what was traced
            return
        findings, errors = checks.own(report, buffer)
        self.publish(buffer, findings, errors, report.entries)
        root, commands = listed.reaching(buffer.path)
        for command in commands:  # what a listed run captures in this file joins what its check found
            async with Progress(self, f"xlalint run {command}"):
                found, failed = await listed.run_command(root, command, state.processes.append)
            if state.version != version:
                return
            findings = one_per_place(findings + [f for f in found if os.path.abspath(f.path) == buffer.path])
            errors += [FileError(buffer.path, failed)] if failed else []
            self.publish(buffer, findings, errors, report.entries)

    def changed(self, key: str) -> None:
        self.stale(key)
        self.spawn(key, self.check_static(key))

    def saved(self, key: str) -> None:
        self.stale(key)
        self.spawn(key, self.check_static(key))
        self.spawn(key, self.check_saved(key))

    def spawn(self, key: str, work) -> None:
        """Run ``work`` on a buffer in the background; a failure of xlalint's own is logged, shown, and published
        on the buffer as an error, never lost."""
        task = asyncio.ensure_future(work)
        task.add_done_callback(lambda done: self._failed(key, done))

    def _failed(self, key: str, task: asyncio.Future) -> None:
        error = None if task.cancelled() else task.exception()
        if error is None:
            return
        logging.getLogger(__name__).error("check failed", exc_info=error)
        message = f"xlalint failed: {type(error).__name__}: {error}"
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))
        buffer = self.buffer(key)
        if buffer is not None and key in self.states:
            self.publish(buffer, [], [FileError(buffer.path, message)], [])

    def closed(self, key: str, documents: tuple[str, ...]) -> None:
        self.stale(key)
        del self.states[key]
        for uri in documents:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))


class Progress:
    """``$/progress`` begin and end around a trace, where the client takes them."""

    def __init__(self, server: XlalintServer, message: str):
        self.server, self.message = server, message
        self.token: str | None = None

    async def __aenter__(self) -> Progress:
        window = self.server.client_capabilities.window
        if window and window.work_done_progress:
            token = f"xlalint-{next(self.server.tokens)}"
            try:
                await asyncio.wait_for(self.server.work_done_progress.create_async(token), PROGRESS_WAIT_S)
            except (asyncio.TimeoutError, JsonRpcException):
                return self  # a client that does not answer gets no progress, and the trace goes on
            self.token = token
            self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin("xlalint", message=self.message))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.token:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd())


def is_python(document) -> bool:
    return document.language_id == "python" or document.path.endswith((".py", ".pyi"))


def make_server() -> XlalintServer:
    server = XlalintServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: XlalintServer, params: types.InitializedParams) -> None:
        ls.shared = SharedServer(ls.warm, ls.workspace.root_path or os.getcwd())
        ls.shared.open()  # the command line's checks of this workspace trace on the warm server too
        watched = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
        if watched and watched.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions([types.FileSystemWatcher(f"**/{CONFIG_FILE}")])
            try:
                await ls.client_register_capability_async(types.RegistrationParams([types.Registration(
                    "xlalint-config", types.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)]))
            except JsonRpcException as error:  # a client that said it could, and cannot: saves still reload
                logging.getLogger(__name__).warning("no watcher for %s: %s", CONFIG_FILE, error)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: XlalintServer, params: types.DidOpenTextDocumentParams) -> None:
        if is_python(ls.workspace.get_text_document(params.text_document.uri)):
            ls.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: XlalintServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.states:
            ls.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: XlalintServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri in ls.states:
            ls.saved(params.text_document.uri)
        elif params.text_document.uri.endswith(CONFIG_FILE):
            config_changed(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: XlalintServer, params: types.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri in ls.states:
            ls.closed(params.text_document.uri, (params.text_document.uri,))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: XlalintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.changed(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: XlalintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.changed(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: XlalintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.saved(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: XlalintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.closed(params.notebook_document.uri, tuple(c.uri for c in params.cell_text_documents))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: XlalintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith(CONFIG_FILE) for change in params.changes):
            config_changed(ls)

    def config_changed(ls: XlalintServer) -> None:
        for key in list(ls.states):
            ls.changed(key)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL]))
    def code_action(ls: XlalintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        buffer = ls.buffer(uri)
        if buffer is None or buffer.key not in ls.states:
            return None
        found = ls.states[buffer.key].findings
        first, last = (buffer.module_line(uri, p.line) for p in (params.range.start, params.range.end))
        here = [f for f in found if first <= f.line <= last]
        return actions.actions(buffer, here, found) or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: XlalintServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        buffer = ls.buffer(uri)
        if buffer is None or buffer.key not in ls.states:
            return None
        state, line = ls.states[buffer.key], buffer.module_line(uri, params.position.line)
        text = hover_text([f for f in state.findings if f.line == line],
                          [e for e in state.entries if e.line == line and os.path.abspath(e.path) == buffer.path])
        if text is None:
            return None
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text),
                           line_range(buffer.lines(uri), params.position.line))

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: XlalintServer, params: None) -> None:
        ls.close()

    return server


def main(argv: list[str]) -> int:
    """``xlalint server``: serve one editor over stdin and stdout until it says exit."""
    import argparse

    parser = argparse.ArgumentParser(prog="xlalint server", description="The xlalint language server (LSP over "
                                     "stdio): static findings as you type, full findings from a warm tracing "
                                     "server when you save. See docs/editors.md.")
    parser.add_argument("--log", metavar="FILE", help="write the server's log to FILE")
    args = parser.parse_args(argv)
    if args.log:
        logging.basicConfig(filename=args.log, level=logging.INFO)
    server = make_server()
    try:
        server.start_io()
    finally:
        server.close()
    return 0
