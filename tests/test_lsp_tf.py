"""``xlalint server`` on save: the full findings from its warm tracing server, over stdio with a real LSP client.

One editor session for the module (TensorFlow imported once by its server): a save gets the compiler's
answer at the compiler's line (the script also run for real, ``run_truth.py``), with ``$/progress``; a file
that hangs at import reports its timeout and the server goes on; a newer save kills a stale trace; a listed
``xlalint run`` command that reaches the saved file adds what it captured there; the
command line traces on the same server and answers as a cold run does; shutdown and exit during a trace kill it,
not waiting for it, and leave no process behind.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from helpers import REPO, alive, repo_env
from lsp_client import TF_SERVER, WAIT_S, codes, diagnostics, open_file, save, start

pytestmark = pytest.mark.tf  # the server traces with TensorFlow
SCENARIO = REPO / "tests" / "data" / "check" / "loop_blocker.py"
STATIC = "(static: by API name, not traced)"
KILLED_WITHIN_S = 60  # a guard, far below the 20 minutes the hanging import would otherwise be given
HANGS = '''import os
import time

import tensorflow as tf

with open({marker!r}, "w") as note:
    note.write(str(os.getpid()))
time.sleep(600)


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def step(x):
    return x * 2
'''


def descendants(pid: int) -> set[int]:
    """Every process started by ``pid``, and by those, now (Linux /proc)."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            children = {int(c) for c in task.read_text().split()}
            todo += children - found
            found |= children
    return found


async def eventually(condition) -> None:
    """Wait until ``condition()`` holds, the client answering the server meanwhile."""
    while not condition():
        await asyncio.sleep(0.1)


async def traced(client: LanguageClient, name: str) -> list:
    """The progress reports of the trace of file ``name``, once it has ended."""

    def ended() -> list:
        return next((r for r in client.progress_reports.values()
                     if r and name in (r[0].message or "") and r[-1].kind == "end"), [])

    async def wait() -> list:
        while not ended():
            await client.wait_for_notification(types.PROGRESS)
        return ended()

    return await asyncio.wait_for(wait(), WAIT_S)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project, a folder of it whose [tool.xlalint] gives a file 8 seconds, and one that gives it 20 minutes."""
    root = tmp_path_factory.mktemp("project")
    for folder, timeout in ((root, 60), (root / "slow", 8), (root / "patient", 1200)):
        folder.mkdir(exist_ok=True)
        (folder / "pyproject.toml").write_text(f"[tool.xlalint]\ndevice = \"cpu\"\ntimeout = {timeout}\n")
    return root


@pytest_lsp.fixture(config=TF_SERVER, scope="module")
async def client(lsp_client: LanguageClient, project):
    await start(lsp_client, project)
    yield
    if lsp_client._server.returncode is None:  # the last test ends the session itself
        await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_save_gets_the_compilers_answer_at_its_line(client: LanguageClient, project, tmp_path):
    shutil.copy(SCENARIO, tmp_path)
    truth = subprocess.Popen([sys.executable, str(REPO / "tests" / "run_truth.py"), str(tmp_path / "truth.json"),
                              str(tmp_path), SCENARIO.stem], env=repo_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    path = project / SCENARIO.name
    text = SCENARIO.read_text()
    path.write_text(text)
    uri = open_file(client, path)
    static = await diagnostics(client, uri, bool)
    assert all(STATIC in d.message for d in static if d.code == "XLA001")
    save(client, path, text)
    full = await diagnostics(client, uri, lambda d: any(x.code == "XLA001" and STATIC not in x.message for x in d))
    truth.wait(timeout=600)
    real = json.loads((tmp_path / "truth.json").read_text())[SCENARIO.stem]
    assert not real["ok"] and real["op"] == "StringFormat"  # the compiler refuses tf.print there
    assert ("XLA001", real["compiler_line"]) in codes(full)
    blocker = next(d for d in full if d.code == "XLA001")
    assert "PrintV2" in blocker.message and "StringFormat" not in blocker.message  # the traced op, not the API's
    assert [r.kind for r in await traced(client, SCENARIO.name)] == ["begin", "end"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_file_that_hangs_at_import_reports_its_timeout_and_the_server_goes_on(client, project, tmp_path):
    path = project / "slow" / "hangs.py"
    text = HANGS.format(marker=str(tmp_path / "pid"))
    path.write_text(text)
    uri = open_file(client, path)
    save(client, path, text)
    await traced(client, "hangs.py")
    [error] = await diagnostics(client, uri, lambda d: len(d) == 1 and d[0].code is None)
    assert "budget" in error.message or "timed out" in error.message
    assert not alive(int((tmp_path / "pid").read_text()))
    clean = project / "clean.py"  # the next file, with a budget a busy machine's trace fits in
    clean.write_text("import tensorflow as tf\n\n\n" + HANGS.split("\n\n\n")[1])
    clean_uri = open_file(client, clean)
    save(client, clean, clean.read_text())
    await traced(client, "clean.py")
    shown = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(clean_uri),
                                                                     types.Position(4, 5)))
    assert shown and "`step`: compatible" in shown.contents.value


@pytest.mark.asyncio(loop_scope="module")
async def test_a_newer_save_kills_the_stale_trace(client: LanguageClient, project, tmp_path):
    path = project / "patient" / "edited.py"
    hanging = HANGS.format(marker=str(tmp_path / "pid"))
    path.write_text(hanging)
    uri = open_file(client, path)
    save(client, path, hanging)
    await asyncio.wait_for(eventually(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text()), WAIT_S)
    stale = int((tmp_path / "pid").read_text())
    fixed = SCENARIO.read_text()
    save(client, path, fixed)  # the trace of the hanging version is stale now: killed, not waited for
    await asyncio.wait_for(eventually(lambda: not alive(stale)), KILLED_WITHIN_S)
    full = await diagnostics(client, uri, lambda d: any(x.code == "XLA001" and STATIC not in x.message for x in d))
    assert not any(d.code is None for d in full)  # the stale trace is not reported


@pytest.mark.asyncio(loop_scope="module")
async def test_a_listed_run_that_reaches_the_saved_file_adds_what_it_captured(client: LanguageClient, project):
    folder = project / "listed"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[tool.xlalint]\ndevice = \"cpu\"\nrun = [\"train.py\"]\n")
    (folder / "train.py").write_text("import tensorflow as tf\n\nfrom model import step\n\n"
                                     "if __name__ == \"__main__\":\n    step(tf.ones([4]))\n")
    path = folder / "model.py"  # no signature: only the run's call traces it
    text = "import tensorflow as tf\n\n\n@tf.function(jit_compile=True)\ndef step(x):\n    tf.print(x)\n    return x\n"
    path.write_text(text)
    uri = open_file(client, path)
    save(client, path, text)
    found = await diagnostics(client, uri, lambda d: any(x.code == "XLA001" and STATIC not in x.message for x in d))
    assert ("XLA001", 6) in codes(found)
    assert [r.kind for r in await traced(client, "xlalint run train.py")] == ["begin", "end"]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_command_line_traces_on_the_editors_server_with_the_cold_answer(client: LanguageClient, project):
    shutil.copy(SCENARIO, project / "from_cli.py")
    command = [sys.executable, "-m", "xlalint", "--no-cache", "--format", "json", "from_cli.py"]
    warm, cold = [await asyncio.to_thread(subprocess.run, command, cwd=project, capture_output=True, timeout=600,
                                          env=repo_env(env)) for env in ({}, {"XLALINT_NO_SERVER": "1"})]
    assert b"tracing on the running xlalint server" in warm.stderr, warm.stderr
    assert b"running xlalint server" not in cold.stderr
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode == 1
    assert json.loads(warm.stdout)["findings"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_run_with_more_files_than_the_warm_server_is_worth_starts_its_own_servers(client, project):
    folder = project / "many"
    folder.mkdir()
    for index in range(14):  # more than tracing.shared.worth_sharing gives one server at --jobs 4
        (folder / f"step_{index}.py").write_text(
            "import tensorflow as tf\n\n\n@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])\n"
            f"def step_{index}(x):\n    return x * {index}\n")
    command = [sys.executable, "-m", "xlalint", "--no-cache", "--format", "json", "--jobs", "4", "many"]
    done = await asyncio.to_thread(subprocess.run, command, cwd=project, capture_output=True, timeout=600,
                                   env=repo_env({}))
    assert b"running xlalint server" not in done.stderr, done.stderr
    assert sorted(e["name"] for e in json.loads(done.stdout)["entries"]) == sorted(f"step_{i}" for i in range(14))


@pytest.mark.asyncio(loop_scope="module")
async def test_shutdown_and_exit_leave_no_process_nor_wait_for_a_trace(client: LanguageClient, project, tmp_path):
    path = project / "patient" / "closing.py"  # its trace would run 20 minutes: shutdown kills it
    text = HANGS.format(marker=str(tmp_path / "pid"))
    path.write_text(text)
    open_file(client, path)
    save(client, path, text)
    await asyncio.wait_for(eventually(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text()), WAIT_S)
    server = client._server
    started = descendants(server.pid)
    assert int((tmp_path / "pid").read_text()) in started  # the trace's child, under the warm tracing server
    await asyncio.wait_for(client.shutdown_session(), KILLED_WITHIN_S)
    assert server.returncode == 0
    await asyncio.wait_for(eventually(lambda: not any(alive(pid) for pid in started)), 30)
