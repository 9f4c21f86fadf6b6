"""A warm tracing server shared with the command line: ``xlalint FILE`` traces on an editor's server when one runs.

``xlalint server`` offers its ``WarmServer`` (``xlalint.tracing.warm``) on a Unix socket named for its workspace
folder, in ``~/.cache/xlalint/servers/`` (a folder only its user can enter; where that path is too long for a
socket, ``/tmp/xlalint-UID/``, checked to be as private). The check command looks for one
named for the checked path's folder or a folder above it; it is used only when it answers, with the same
interpreter and the same xlalint code (a fingerprint of the package's files) as the command's own: a stale or
dead server is never used, and ``XLALINT_NO_SERVER=1`` turns the lookup off. With ``--jobs`` above 1 and more
files to trace than ``worth_sharing`` allows, the run starts its own servers instead. Only the traces cross: each
file's result is what a cold run's tracing server would give (a fresh child per file, the guarded import),
and the command analyses it itself, so its answer is the cold run's, byte for byte.

Messages are marshal frames (an 8-byte length, then the data): the results are the wire's JSON-typed records
(``xlalint.process.result_file``), between two processes of one interpreter.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import socket
import stat
import struct
import sys
import threading
from pathlib import Path
from typing import Iterator

from xlalint.core.own_code import code_digest
from xlalint.core.support import cache_dir
from xlalint.core.wire import FileResult, Request
from xlalint.tracing.server import WorkerError
from xlalint.tracing.warm import WarmServer

OFF = "XLALINT_NO_SERVER"
FILES_PER_IMPORT = 10  # small files whose traces cost about what a warm server saves: TensorFlow's import
HEADER = struct.Struct("!Q")
CONNECT_TIMEOUT_S = 2.0
MAX_SOCKET_PATH = 100  # sockaddr_un's limit, with room


def code_fingerprint() -> str:
    """What makes two xlalint processes answer alike: the interpreter and the package's files."""
    return hashlib.sha256(f"{sys.executable}\0{sys.version}\0{code_digest()}".encode()).hexdigest()


def socket_path(folder: str, make: bool = False) -> Path | None:
    """The socket of ``folder``'s server: a hash of the folder and of the cache's (each cache its own servers), in
    the cache's ``servers`` folder, or where that path is too long for a socket (a deep home or temporary folder,
    as macOS gives), in a short per-user folder of ``/tmp``; None where neither is usable (sharing is off). The
    server ``make``s the folder; a lookup makes nothing (a folder that is not there holds no server)."""
    if not hasattr(socket, "AF_UNIX"):
        return None
    key = f"{os.path.realpath(cache_dir())}\0{os.path.realpath(folder)}"
    name = hashlib.sha256(key.encode()).hexdigest()[:24] + ".sock"
    for parent in (cache_dir() / "servers", Path("/tmp") / f"xlalint-{os.getuid()}"):
        if len(str(parent / name)) <= MAX_SOCKET_PATH and _private_folder(parent, make):
            return parent / name
    return None


def _private_folder(path: Path, make: bool) -> bool:
    """Whether ``path`` is a folder only this user can enter (with ``make``, made so if missing): no other user may
    offer a server there, nor reach one."""
    try:
        if make:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def send(connection: socket.socket, message) -> None:
    data = marshal.dumps(message)
    connection.sendall(HEADER.pack(len(data)) + data)


def receive(connection: socket.socket):
    """The next message; EOFError when the other side is gone."""
    size = HEADER.unpack(_exactly(connection, HEADER.size))[0]
    return marshal.loads(_exactly(connection, size))


def _exactly(connection: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(min(size - len(data), 1 << 20))
        if not chunk:
            raise EOFError("the xlalint server closed the connection")
        data += chunk
    return bytes(data)


class SharedServer:
    """The editor's side: its warm server offered on the socket of ``folder`` until ``close``."""

    def __init__(self, warm: WarmServer, folder: str):
        self.warm, self.path = warm, socket_path(folder, make=True)
        self.fingerprint = code_fingerprint()
        self.listener: socket.socket | None = None

    def open(self) -> bool:
        """Listen (in a thread); False where no socket can be made here."""
        if self.path is None:
            return False
        try:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a dead server's
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(str(self.path))
            self.listener.listen()
        except OSError:
            return False
        threading.Thread(target=self._accept, daemon=True).start()
        return True

    def _accept(self) -> None:
        listener = self.listener
        while listener is not None:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        """One command's run: its fingerprint checked, then each request traced and answered as it ends."""
        with connection:
            try:
                hello = receive(connection)
                if hello.get("fingerprint") != self.fingerprint:
                    send(connection, {"ok": False})
                    return
                send(connection, {"ok": True, "pid": os.getpid()})
                ask = receive(connection)
                run = self.warm.start(ask["requests"], ask["timeout"], None, 1, ask["max_memory"])
                try:
                    for path, result in run.answers():
                        send(connection, {"path": path, "result": result, "tensorflow": run.tensorflow})
                except WorkerError as error:
                    send(connection, {"error": str(error)})
                finally:
                    run.close()
            except (OSError, EOFError, ValueError, KeyError, TypeError):
                return  # the command went away, or spoke nonsense: nothing to answer

    def close(self) -> None:
        listener, self.listener = self.listener, None
        if listener is not None and self.path is not None:  # a listener has its path
            listener.close()
            with contextlib.suppress(OSError):
                self.path.unlink()


def worth_sharing(files: int, jobs: int) -> bool:
    """Whether ``files`` to trace end sooner on a warm server, which checks one at a time, than on ``jobs`` servers
    of the run's own, which import TensorFlow first: the import it saves against the traces the other jobs would
    take on (up to 20 files at ``--jobs 2``, 13 at 4, 11 at 8; always at ``--jobs 1``)."""
    return files * (jobs - 1) <= FILES_PER_IMPORT * jobs


def find_shared(paths: list[str]) -> socket.socket | None:
    """A connection to a live server of the same code for the first path's folder or one above it, or None."""
    if os.environ.get(OFF):
        return None
    start = Path(os.path.abspath(paths[0] if paths else "."))
    for folder in ([start] if start.is_dir() else []) + list(start.parents):
        path = socket_path(str(folder))
        if path is None or not path.exists():
            continue
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.settimeout(CONNECT_TIMEOUT_S)
            connection.connect(str(path))
            send(connection, {"fingerprint": code_fingerprint()})
            if receive(connection).get("ok"):
                connection.settimeout(None)
                return connection
        except (OSError, EOFError, ValueError):
            pass
        connection.close()
    return None


class SharedRun:
    """The command's side of one run on a shared server: ``start_worker``'s signature and ``Tracing``'s answers."""

    def __init__(self, connection: socket.socket, requests: list[Request], timeout: float, progress,
                 max_memory_mb: int):
        self.connection, self.requests, self.progress = connection, requests, progress
        self.tensorflow: str | None = None
        send(connection, {"requests": requests, "timeout": timeout, "max_memory": max_memory_mb})

    def answers(self) -> Iterator[tuple[str, FileResult]]:
        for _ in self.requests:
            try:
                message = receive(self.connection)
            except (OSError, EOFError, ValueError) as error:
                raise WorkerError(f"the xlalint server stopped answering: {error}") from None
            if "error" in message:
                raise WorkerError(message["error"])
            self.tensorflow = message["tensorflow"]
            if self.progress:
                self.progress(message["path"])
            yield message["path"], message["result"]

    def close(self) -> None:
        self.connection.close()
