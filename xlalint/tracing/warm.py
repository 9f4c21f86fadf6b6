"""A tracing server kept warm for a session (an editor's ``xlalint server``): TensorFlow imported once, each
check a fresh child forked from it, exactly as one run of the check command checks a file.

``WarmServer.start`` has ``start_worker``'s signature, so ``engine.plan.plan_run`` takes it in its place: a
run's files are then checked one after the other by the one server, which outlives the run. The server is
started at the first check (with the preloads its file asks for) and again only when it has died. A run can
be cancelled from another thread (a newer save arrived): its child is killed with its group, and the server
lives on for the next check.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import threading
from typing import Iterator

from xlalint.process.child_end import kill_group
from xlalint.tracing.preload_plan import preloads
from xlalint.tracing.server import Server, WorkerError, start_server
from xlalint.tracing.workers import check_one, server_env
from xlalint.core.wire import FileResult, Request, file_result

CANCELLED = "cancelled: a newer version of the file is being checked"


class WarmServer:
    """One tracing server for many runs, one check at a time; ``close`` ends it with all it started."""

    def __init__(self) -> None:
        self.workdir = tempfile.mkdtemp(prefix="xlalint-warm-")
        self.server: Server | None = None
        self.lock = threading.Lock()  # one run at a time: the server serves one request at a time
        self.guard = threading.Lock()  # ``close`` and a server's start, in turn: close kills every server started
        self.numbers = itertools.count()
        self.closed = False

    def start(self, requests: list[Request], timeout: float, progress=None, jobs: int = 1,
              max_memory_mb: int = 0) -> WarmRun:
        """A run of ``requests`` on this server (``jobs`` is ignored: one server checks them in turn)."""
        return WarmRun(self, requests, timeout, progress, max_memory_mb)

    def ready(self, requests: list[Request], max_memory_mb: int) -> Server:
        """The live server, started (TensorFlow imported) when there is none; WorkerError once closed."""
        if self.server is not None and self.server.alive and self.server.max_memory_mb == max_memory_mb:
            return self.server
        if self.server is not None:
            self.server.kill()
        self.server = None
        paths = [r["path"] for r in requests if not r.get("saved_model")]
        return start_server("xlalint.backend.worker", preloads(paths), server_env(self.workdir, requests),
                            self.workdir, self._keep, "tracing server", max_memory_mb)

    def _keep(self, server: Server) -> None:
        """A server just started, before it imports TensorFlow: the one ``close`` kills; none goes on once closed."""
        with self.guard:
            self.server = server
            if self.closed:
                raise WorkerError("the xlalint server is closing")

    def close(self) -> None:
        """End the server and its child, and remove the session's files. A check under way is not waited for: its
        server is killed first (the check answers CANCELLED), and no other starts."""
        with self.guard:
            self.closed = True
            server = self.server
        if server is not None:
            server.end_processes()
        with self.lock:
            if self.server is not None:
                self.server.kill()
            shutil.rmtree(self.workdir, ignore_errors=True)


class WarmRun:
    """One run's files, checked in order on a ``WarmServer``; answers as ``Tracing.answers`` gives them."""

    def __init__(self, warm: WarmServer, requests: list[Request], timeout: float, progress, max_memory_mb: int):
        self.warm, self.requests, self.timeout = warm, requests, timeout
        self.progress, self.max_memory_mb = progress, max_memory_mb
        self.tensorflow: str | None = None
        self.cancelled = False
        self.server: Server | None = None  # the server while it checks one of this run's files

    def answers(self) -> Iterator[tuple[str, FileResult]]:
        """Each file's ``(path, result)``; raises ``WorkerError`` when no server starts."""
        for request in self.requests:
            yield request["path"], self._check(request)

    @property
    def stopped(self) -> bool:
        """Cancelled, or its warm server closed: what it still checks answers CANCELLED."""
        return self.cancelled or self.warm.closed

    def _check(self, request: Request) -> FileResult:
        cancelled = file_result(request["path"], CANCELLED)
        with self.warm.lock:
            for _ in range(2):  # a server that died since its last check is replaced, once
                if self.stopped:
                    return cancelled
                try:
                    result, ended, _ = check_one(self._serving(), self.warm.workdir, request, next(self.warm.numbers),
                                                 self.timeout, self.progress, self._serving)
                except WorkerError:  # a server started as the session closed
                    if not self.warm.closed:
                        raise
                    return cancelled
                finally:
                    self.server = None
                if not ended:
                    break
        return cancelled if self.stopped else result

    def _serving(self) -> Server:
        """The warm server, started where it died (also for the file again with real values): this run's child
        runs on it, where ``cancel`` kills it."""
        server = self.server = self.warm.ready(self.requests, self.max_memory_mb)
        self.tensorflow = server.tensorflow
        return server

    def cancel(self) -> None:
        """Stop this run from any thread: the file being checked is killed, the next ones are not started."""
        self.cancelled = True
        server = self.server
        if server is not None:
            kill_group(server.child)

    def close(self) -> None:
        """The run's end (or an interrupt): whatever it still checks is stopped; the server stays."""
        self.cancel()
