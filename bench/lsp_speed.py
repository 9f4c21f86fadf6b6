"""How soon does an editor get xlalint's findings from ``xlalint server``? Against a cold ``xlalint FILE``.

    python bench/lsp_speed.py                 # 10 changes, 3 saves
    python bench/lsp_speed.py --changes 20 --saves 5

A real LSP client (pygls) starts ``xlalint server`` over stdio in a temporary project and measures, from the
notification sent to the diagnostics published for it:

- change: a 1,000-line file (50 compiled functions, each with a blocker) edited as a whole, each edit
  adding or removing one blocker; the ``--static`` findings of the unsaved text;
- save: a small Keras file saved with a one-line edit each time (so no cached result answers it): the full
  findings, traced on the session's warm server; the first save, which starts that server (TensorFlow
  imported), is shown apart;
- in the same run, ``xlalint --no-cache FILE`` of the same Keras file from the command line, cold
  (``XLALINT_NO_SERVER=1``) and on the session's server, alternately.

Prints each figure (median, min, max), the ratios to the cold command, and whether all commands printed the
same report.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parent.parent
FUNCTION = '''

@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([8], tf.float32)])
def step_{i}(x):
    y = x * 2.0
    y = y + 1.0
    y = tf.nn.relu(y)
    z = tf.reduce_sum(y)
    z = z * 3.0
    z = z - 1.0
    tf.print(z)
    w = tf.square(y)
    w = tf.reduce_mean(w)
    w = w + z
    v = tf.concat([y, y], axis=0)
    v = tf.reduce_max(v)
    return w + v
'''
KERAS = '''import keras
import tensorflow as tf


def build_model():
    inputs = keras.Input(shape=(16,), batch_size=8)
    hidden = keras.layers.Dense({units}, activation="relu")(inputs)
    outputs = keras.layers.Dense(4)(hidden)
    return keras.Model(inputs, outputs)


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([8, 16], tf.float32)])
def features(x):
    tf.print(tf.reduce_sum(x))
    return tf.nn.l2_normalize(x, axis=1)
'''


def big_file() -> str:
    text = "import tensorflow as tf\n" + "".join(FUNCTION.format(i=i) for i in range(50))
    return "\n".join(text.splitlines()[:1000]) + "\n"


class Session:
    """A client, the server it started, and the diagnostics and progress it was sent, with their times."""

    def __init__(self) -> None:
        self.client = LanguageClient("lsp-speed", "1")
        self.published: list[tuple[float, str, int | None, int]] = []
        self.progress_ended: list[float] = []
        self.news = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.published.append((time.perf_counter(), params.uri, params.version, len(params.diagnostics)))
            self.news.set()

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            if getattr(params.value, "kind", None) == "end" or (isinstance(params.value, dict)
                                                                 and params.value.get("kind") == "end"):
                self.progress_ended.append(time.perf_counter())
                self.news.set()

    async def start(self, root: Path) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        await self.client.start_io(sys.executable, "-m", "xlalint", "server", env=env, cwd=str(root))
        capabilities = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
        await self.client.initialize_async(types.InitializeParams(capabilities=capabilities, root_uri=root.as_uri()))
        self.client.initialized(types.InitializedParams())

    async def until(self, condition) -> float:
        """The time of the first event ``condition()`` holds after (it returns that time or None)."""
        while (at := condition()) is None:
            self.news.clear()
            await self.news.wait()
        return at

    def diagnostics_after(self, uri: str, version: int, after: float = 0.0):
        return lambda: next((t for t, u, v, _ in self.published if u == uri and v == version and t > after), None)

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def summary(name: str, times: list[float]) -> str:
    return (f"{name:<48} median {statistics.median(times) * 1000:8.1f} ms   min {min(times) * 1000:8.1f}   "
            f"max {max(times) * 1000:8.1f}   (n={len(times)})")


async def changes(session: Session, root: Path, count: int) -> list[float]:
    path = root / "big.py"
    text = big_file()
    path.write_text(text)
    uri = path.as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
    await session.until(session.diagnostics_after(uri, 1))
    times = []
    for version in range(2, count + 2):
        edited = text.replace("    tf.print(z)\n", "    z = z + 0.0\n", 1) if version % 2 == 0 else text
        sent = time.perf_counter()
        session.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri),
            [types.TextDocumentContentChangeWholeDocument(edited)]))
        times.append(await session.until(session.diagnostics_after(uri, version, sent)) - sent)
    return times


async def saves(session: Session, root: Path, count: int) -> tuple[float, list[float]]:
    path = root / "keras_model.py"
    path.write_text(KERAS.format(units=32))
    uri = path.as_uri()
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "python", 1, path.read_text())))
    times = []
    for version in range(2, count + 3):
        text = KERAS.format(units=32 + version)
        session.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri), [types.TextDocumentContentChangeWholeDocument(text)]))
        path.write_text(text)
        sent = time.perf_counter()
        session.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
        ended = await session.until(lambda: next((t for t in session.progress_ended if t > sent), None))
        times.append(await session.until(session.diagnostics_after(uri, version, ended)) - sent)
    return times[0], times[1:]


def command(root: Path, shared: bool) -> tuple[float, bytes]:
    """``xlalint --no-cache FILE`` of the Keras file: its wall time and output, on the session's server or cold."""
    env = dict(os.environ, PYTHONPATH=str(REPO), **({} if shared else {"XLALINT_NO_SERVER": "1"}))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "xlalint", "--no-cache", "-q", "--format", "json", "keras_model.py"],
                          cwd=root, env=env, capture_output=True)
    return time.perf_counter() - start, done.stdout


async def main(args) -> None:
    with tempfile.TemporaryDirectory(prefix="lsp-speed-") as folder:
        root = Path(folder)
        (root / "pyproject.toml").write_text("[tool.xlalint]\ndevice = \"cpu\"\n")
        session = Session()
        await session.start(root)
        try:
            changed = await changes(session, root, args.changes)
            first, saved = await saves(session, root, args.saves)
            runs = [await asyncio.to_thread(command, root, shared)
                    for _ in range(args.cold) for shared in (False, True)]
        finally:
            await session.stop()
    colds, warms = [t for t, _ in runs[::2]], [t for t, _ in runs[1::2]]
    print(summary("change -> static diagnostics (1,000 lines)", changed))
    print(summary("first save -> full diagnostics (starts TF)", [first]))
    print(summary("save -> full diagnostics (warm server)", saved))
    print(summary("cold `xlalint --no-cache FILE`", colds))
    print(summary("`xlalint --no-cache FILE` on the running server", warms))
    print(f"warm save / cold command: {statistics.median(saved) / statistics.median(colds):.2f}x")
    print(f"command on the server / cold command: {statistics.median(warms) / statistics.median(colds):.2f}x; "
          f"same output: {len({out for _, out in runs}) == 1}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--cold", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
