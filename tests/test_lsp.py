"""``xlalint server`` without TensorFlow, end to end over stdio with a real LSP client (pytest-lsp): the static
findings of the editor's text as it changes, code actions, hover, notebooks, and the config's changes."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from helpers import run_without_tf
from lsp_client import NO_TF_SERVER, STATIC_WAIT_S, apply, change, codes, diagnostics, open_file, start

BLOCKED = '''import tensorflow as tf


@tf.function(experimental_compile=True, input_signature=[tf.TensorSpec([4], tf.float32)])
def step(x):
    tf.print(x)
    return x * 2
'''


async def static(client: LanguageClient, uri: str, until) -> list[types.Diagnostic]:
    """``diagnostics`` of a static check: seconds, even on a busy machine."""
    return await diagnostics(client, uri, until, STATIC_WAIT_S)


async def answered(request):
    """A request's answer, within the same bound."""
    return await asyncio.wait_for(request, STATIC_WAIT_S)


@pytest_lsp.fixture(config=NO_TF_SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.xlalint]\ndevice = \"cpu\"\n")
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


async def opened(client: LanguageClient, folder) -> tuple[str, list[types.Diagnostic]]:
    """A saved file with findings opened in the editor: its URI and first diagnostics."""
    path = folder / "model.py"
    path.write_text(BLOCKED)
    uri = open_file(client, path)
    return uri, await static(client, uri, bool)


@pytest.mark.asyncio
async def test_static_findings_of_the_unsaved_text(client: LanguageClient, tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import tensorflow as tf\n")
    uri = open_file(client, path, BLOCKED)  # the editor's text, not the file's
    found = await static(client, uri, bool)
    assert codes(found) == [("XLA001", 6), ("XLA401", 4)]
    blocker = next(d for d in found if d.code == "XLA001")
    assert blocker.severity == types.DiagnosticSeverity.Error and blocker.source == "xlalint"
    assert (blocker.range.start.line, blocker.range.start.character, blocker.range.end.character) == (5, 4, 12)
    assert blocker.code_description and blocker.code_description.href.endswith("rules/XLA001/README.md")
    change(client, uri, BLOCKED.replace("    tf.print(x)\n", ""), 2)
    assert codes(await static(client, uri, lambda d: len(d) == 1)) == [("XLA401", 4)]


@pytest.mark.asyncio
async def test_fix_action_makes_the_edit_of_fix_and_suppress_adds_a_comment(client: LanguageClient, tmp_path):
    uri, found = await opened(client, tmp_path)
    renamed = next(d for d in found if d.code == "XLA401")
    offered = await answered(client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), renamed.range, types.CodeActionContext([renamed]))))
    titles = [a.title for a in offered]
    fix = next(a for a in offered if "XLA401, safe fix" in a.title)
    assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix
    by_fix = tmp_path / "by_fix.py"
    by_fix.write_text(BLOCKED)
    assert run_without_tf("--static", "--fix", "--select", "XLA401", str(by_fix), cwd=tmp_path).returncode == 0
    assert apply(BLOCKED, fix.edit.changes[uri]) == by_fix.read_text()
    suppress = next(a for a in offered if a.title == "xlalint: suppress XLA401 on this line")
    suppressed = apply(BLOCKED, suppress.edit.changes[uri])
    assert suppressed.splitlines()[3].endswith("# xlalint: ignore[XLA401]")
    assert "xlalint: fix all safe fixes (--fix)" in titles
    change(client, uri, suppressed, 2)
    assert codes(await static(client, uri, lambda d: len(d) == 1)) == [("XLA001", 6)]


@pytest.mark.asyncio
async def test_hover_gives_the_hint(client: LanguageClient, tmp_path):
    uri, _ = await opened(client, tmp_path)
    shown = await answered(client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri),
                                                                                      types.Position(5, 6))))
    assert "**XLA001**" in shown.contents.value and "return the values and print them" in shown.contents.value


@pytest.mark.asyncio
async def test_config_change_is_read_again(client: LanguageClient, tmp_path):
    uri, found = await opened(client, tmp_path)
    assert len(found) == 2
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.xlalint]\ndevice = \"cpu\"\nignore = [\"XLA4\"]\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(config.as_uri(), types.FileChangeType.Changed)]))
    assert codes(await static(client, uri, lambda d: len(d) == 1)) == [("XLA001", 6)]
    config.write_text("[tool.xlalint]\nnot_a_key = 1\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(config.as_uri(), types.FileChangeType.Changed)]))
    broken = await static(client, uri, lambda d: len(d) == 1 and d[0].code is None)
    assert "unknown key `not_a_key`" in broken[0].message


NOTEBOOK_CELLS = ["import tensorflow as tf\n%matplotlib inline", "x = 1",
                  "@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([4], tf.float32)])\n"
                  "def step(x):\n    tf.print(x)\n    return x"]


@pytest.mark.asyncio
async def test_notebook_findings_are_in_their_cells(client: LanguageClient, tmp_path):
    notebook = (tmp_path / "train.ipynb").as_uri()
    cells = [f"{notebook}#cell{i}" for i in range(len(NOTEBOOK_CELLS) + 1)]
    kinds = [types.NotebookCellKind.Code, types.NotebookCellKind.Markup, types.NotebookCellKind.Code,
             types.NotebookCellKind.Code]
    texts = [NOTEBOOK_CELLS[0], "# notes", NOTEBOOK_CELLS[1], NOTEBOOK_CELLS[2]]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(notebook, "jupyter-notebook", 1,
                               [types.NotebookCell(k, c) for k, c in zip(kinds, cells)]),
        [types.TextDocumentItem(c, "python" if k == types.NotebookCellKind.Code else "markdown", 1, t)
         for c, k, t in zip(cells, kinds, texts)]))
    found = await static(client, cells[3], bool)
    assert codes(found) == [("XLA001", 3)]
    assert not client.diagnostics[cells[0]] and not client.diagnostics[cells[2]]
    edited = NOTEBOOK_CELLS[2].replace("jit_compile=True", "experimental_compile=True")
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(2, notebook),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(types.VersionedTextDocumentIdentifier(2, cells[3]),
                                                     [types.TextDocumentContentChangeWholeDocument(edited)])]))))
    found = await static(client, cells[3], lambda d: len(d) == 2)
    assert codes(found) == [("XLA001", 3), ("XLA401", 1)]
    renamed = next(d for d in found if d.code == "XLA401")
    offered = await answered(client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(cells[3]), renamed.range, types.CodeActionContext([renamed]))))
    fix = next(a for a in offered if "XLA401, safe fix" in a.title)
    assert list(fix.edit.changes) == [cells[3]]  # the fix touches its cell only
    assert apply(edited, fix.edit.changes[cells[3]]) == NOTEBOOK_CELLS[2]


def test_server_help():
    done = run_without_tf("server", "--help")
    assert done.returncode == 0 and "language server" in done.stdout
