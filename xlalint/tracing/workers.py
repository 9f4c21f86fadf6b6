"""Check files in fresh children of a tracing server, with a timeout and a memory limit per file.

A server process imports TensorFlow once; each file is then imported and traced in a
process forked from it before any user code ran (on Linux; elsewhere in a fresh
interpreter per file), so a file's answer never depends on the other files of the run,
their order or ``--jobs``. With several jobs where servers fork, that first server (the origin)
checks no file: it forks a clone for each job, and a clone for any that must be replaced, so a run
imports TensorFlow once whatever ``--jobs`` says (where clones cannot be made here, fresh servers instead;
``pool.py``).
A file whose server ended before it started the file is put back once for another server. Every server
and child runs in its own session: when a file ends, times out or grows past the memory limit, its whole
process group is killed, and when the run ends or is cancelled, everything it started is.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import tempfile
import threading
from typing import Any, Callable, Iterator, Protocol
from dataclasses import dataclass

from xlalint.process.child_end import death
from xlalint.tracing.preload_plan import preloads
from xlalint.process.result_file import aside, read_result
from xlalint.tracing.pool import ServerPool
from xlalint.tracing.server import EXIT_WAIT_S, Server, WorkerError
from xlalint.core.wire import FileResult, Request, file_result

WAIT_S = 0.2  # the caller waits for answers in steps this short: a signal reaches it between them


@dataclass
class WorkerResult:
    tensorflow: str | None
    files: dict[str, FileResult]  # path -> the file's result


def _check(server: Server, workdir: str, request: Request, number: int, timeout: float,
           progress) -> tuple[FileResult, bool]:
    """One file's result from ``server``, and whether the server ended before it started the file (another
    server may check it); every failure (crash, exit, timeout, memory) becomes its ``error``."""
    files = {"result": os.path.join(workdir, f"{number}.result"), "log": os.path.join(workdir, f"{number}.log")}
    if server.start({**request, **files}) is None:  # a server that does not start the file is replaced
        ended, why = not server.alive, server.stopped("the file")
        server.kill()
        return _outcome(server, request, files, None, why), ended
    if progress:
        progress(request["path"])
    end, killed = server.finish(timeout)
    stopped = {None: None,
               "memory": f"exceeded the memory limit of {server.max_memory_mb} MB while importing or tracing "
                         "(see --max-memory)",
               "timeout": f"timed out after {timeout:g}s while importing or tracing (see --timeout)"}[killed]
    result = _outcome(server, request, files, end, stopped)
    server.done(end)
    return result, False


def _outcome(server: Server, request: Request, files: dict, end: dict | None, stopped: str | None) -> FileResult:
    """The file's result, or why there is none: only a check that finished writes the result file."""
    try:
        return read_result(files["result"])
    except (OSError, ValueError):
        error = stopped or death(end["code"] if end else server.exit_code(), files["log"])
        return file_result(request["path"], error)
    finally:  # a run of many files keeps none of them on disk
        for path in [*files.values(), aside(files["result"])]:
            with contextlib.suppress(OSError):
                os.unlink(path)


def with_real_values(broken: FileResult, again: FileResult) -> FileResult:
    """The result of a file imported again with real values (``Request.first_step``) because zeros broke its
    import (an ``assert`` on what a compiled function returned), as Jupyter or ``python`` would run it."""
    if again.get("error"):
        again["error"] = (f"{broken['error']}, after zeros from `{broken['zeros_from']}`; with real values, "
                          + str(again["error"]).replace("importing the module ", "it ", 1))
    return again


def check_one(server: Server, workdir: str, request: Request, number: int, timeout: float, progress,
              replace: Callable[[], Server]) -> tuple[FileResult, bool, Server]:
    """One file's result, whether the server ended before it started the file (``_check``), and the server to go
    on with: a file whose import zeros broke is imported again with real values, on ``replace()`` where the
    server died meanwhile."""
    result, ended = _check(server, workdir, request, number, timeout, progress)
    if result.get("zeros_from") and not ended and not request.get("first_step"):
        server = server if server.alive else replace()  # the file again, with real values
        again, _ = _check(server, workdir, {**request, "first_step": True}, number, timeout, None)
        result = with_real_values(result, again)
    return result, ended, server


class Run(Protocol):
    """Files being checked by tracing servers: a ``Tracing``, or a warm server's run (``xlalint.tracing.warm``)."""

    progress: Any

    @property
    def tensorflow(self) -> str | None: ...

    def answers(self) -> Iterator[tuple[str, FileResult]]: ...

    def close(self) -> None: ...


def server_env(workdir: str, requests: list[Request]) -> dict[str, str]:
    """The environment of a tracing server whose files go in ``workdir``."""
    # TMPDIR: AutoGraph writes a module file per converted function and removes it only at a
    # normal exit, which a forked child never makes; the run's folder goes with the run.
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"), TMPDIR=workdir)
    if not any((verify := r.get("verify")) and verify["device"] in (None, "gpu") for r in requests):
        env["CUDA_VISIBLE_DEVICES"] = ""  # trace what a CPU builds: Keras builds cuDNN ops where it sees a GPU
    return env


class Tracing:
    """The servers of one run, the files still to check, and their answers as they come."""

    def __init__(self, requests: list[Request], timeout: float, progress, max_memory_mb: int, jobs: int):
        self.todo: queue.Queue = queue.Queue()
        for number, request in enumerate(requests):
            self.todo.put((number, request))
        self.count = len(requests)
        self.answered = 0
        self.done: queue.Queue = queue.Queue()  # (path, result) as each file's check ends
        self.retried: set[int] = set()  # files put back once: their server ended before it started them
        self.timeout, self.progress, self.max_memory_mb = timeout, progress, max_memory_mb
        self.failure: BaseException | None = None
        self.lock = threading.Lock()
        self.running = jobs  # threads still serving; the last one out ends the origin
        self.ended = threading.Event()  # every thread is done, or the run was closed
        self.workdir = tempfile.mkdtemp(prefix="xlalint-")
        preload = preloads([r["path"] for r in requests if not r.get("saved_model")])
        self.env = server_env(self.workdir, requests)
        self.pool = ServerPool("xlalint.backend.worker", preload, self.env, self.workdir, "tracing server", jobs,
                               max_memory_mb, lambda: self.failure)

    @property
    def tensorflow(self) -> str | None:
        """The version the servers imported (None until one has)."""
        return self.pool.tensorflow

    def serve(self) -> None:
        """Take files from the queue until it is empty, (re)starting a server as needed."""
        server = None
        try:
            while self.failure is None:
                try:
                    number, request = self.todo.get_nowait()
                except queue.Empty:
                    return
                if server is None or not server.alive:
                    server = self.pool.server()
                result, ended, server = check_one(server, self.workdir, request, number, self.timeout, self.progress,
                                                  self.pool.server)
                if ended and number not in self.retried:  # it died since `alive`: another server checks it
                    self.retried.add(number)
                    self.todo.put((number, request))
                    continue
                self.done.put((request["path"], result))
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            self.failure = self.failure or error
        finally:
            if server is not None:
                server.kill()
            self._leave()

    def _leave(self) -> None:
        """A thread's end: the last one ends the origin. The others wait for it, since a server dies with the
        thread that started it (``PR_SET_PDEATHSIG``), and the origin, with its clones, may be that one's."""
        with self.lock:
            self.running -= 1
            last = self.running == 0
        if not last:
            self.ended.wait()
            return
        self.pool.stop_origin()
        self.ended.set()

    def answers(self) -> Iterator[tuple[str, FileResult]]:
        """Each file's ``(path, result)`` as its check ends (with several servers, not in request order);
        a server that cannot start raises its WorkerError once the answers already in are taken."""
        for _ in range(self.count):
            while True:
                try:
                    answer = self.done.get(timeout=WAIT_S)
                    break
                except queue.Empty:
                    if self.failure is not None:
                        raise self.failure from None
            self.answered += 1
            yield answer

    def close(self) -> None:
        """Kill every process of the run and remove its files; once every file is answered, the jobs first end
        in order (the origin reaps its clones, so that their time counts as its children's). An interrupt
        meanwhile (a signal handler raises in this thread) still kills and removes everything."""
        try:
            if self.answered == self.count:
                self.ended.wait(EXIT_WAIT_S)
        finally:
            self.failure = self.failure or WorkerError("the run was stopped")
            self.ended.set()
            self.pool.kill_all()
            shutil.rmtree(self.workdir, ignore_errors=True)


def start_worker(requests: list[Request], timeout: float, progress=None, jobs: int = 1,
                 max_memory_mb: int = 0) -> Tracing:
    """Start checking each file request in the background; take the results from ``answers()`` and
    ``close()`` the run (which kills whatever is left of it) when done or interrupted.

    ``jobs`` servers, each started at once on its own thread, take files from one queue;
    ``progress(path)`` is called as each file starts. A file whose process exceeds
    ``max_memory_mb`` of resident memory (0: no limit) or ``timeout`` seconds is killed with
    everything it started. The caller's thread only waits in short steps, so an interrupt
    (KeyboardInterrupt, or any exception raised by a signal handler) reaches it at once.
    """
    threads = max(1, min(jobs, len(requests)))
    tracing = Tracing(requests, timeout, progress, max_memory_mb, threads)
    for _ in range(threads):
        threading.Thread(target=tracing.serve, daemon=True).start()
    return tracing


def run_worker(requests: list[Request], timeout: float, progress=None, jobs: int = 1,
               max_memory_mb: int = 0) -> WorkerResult:
    """``start_worker``, waiting for every file: the per-file results, errors included."""
    tracing = start_worker(requests, timeout, progress, jobs, max_memory_mb)
    try:
        files = dict(tracing.answers())
    finally:
        tracing.close()
    return WorkerResult(tracing.tensorflow, files)
