"""What the language server's tests share: a real LSP client (pytest-lsp) talking to ``xlalint server`` over stdio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from helpers import no_tf_path, repo_env

WAIT_S = 600  # a guard against a hang, not a measure: a trace on a busy machine can take minutes
STATIC_WAIT_S = 120  # the same guard for a static check (seconds on a busy machine)

SERVER = [sys.executable, "-m", "xlalint", "server"]
NO_TF_SERVER = ClientServerConfig(server_command=SERVER, server_env=repo_env({"PYTHONPATH": no_tf_path()}))
TF_SERVER = ClientServerConfig(server_command=SERVER, server_env=repo_env())
CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)),
    text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True),
        code_action=types.CodeActionClientCapabilities(code_action_literal_support=types.ClientCodeActionLiteralOptions(
            types.ClientCodeActionKindOptions([types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll])))),
    notebook_document=types.NotebookDocumentClientCapabilities(
        types.NotebookDocumentSyncClientCapabilities(execution_summary_support=False)))


async def start(client: LanguageClient, root: Path) -> list[types.Registration]:
    """Initialize the session; the registrations the server then asks for (what an editor would watch)."""
    registered: list[types.Registration] = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registered.extend(params.registrations)

    await client.initialize_session(types.InitializeParams(capabilities=CAPABILITIES, root_uri=root.as_uri()))
    return registered


async def diagnostics(client: LanguageClient, uri: str, until, wait_s: float = WAIT_S) -> list[types.Diagnostic]:
    """The document's diagnostics once ``until(them)`` holds for the latest published (at most ``wait_s``)."""

    async def wait() -> list[types.Diagnostic]:
        while True:
            found = client.diagnostics.get(uri)
            if found is not None and until(found):
                return found
            failed = [d.message for d in found or () if d.message.startswith("xlalint failed")]
            assert not failed, failed  # the server's own error, published on the document
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), wait_s)


def codes(found: list[types.Diagnostic]) -> list[tuple[str, int]]:
    """``(code, 1-based line)`` of each diagnostic."""
    return sorted((str(d.code), d.range.start.line + 1) for d in found)


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "python", version, path.read_text() if text is None else text)))
    return uri


def change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """The whole text replaced, as an editor may send it."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version, uri), [types.TextDocumentContentChangeWholeDocument(text)]))


def save(client: LanguageClient, path: Path, text: str) -> None:
    """The editor writes the file, then says so."""
    path.write_text(text)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(path.as_uri())))


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """``edits`` made to ``text`` (LSP positions: 0-based lines, characters within them), last first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return starts[min(position.line, len(lines))] + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text
