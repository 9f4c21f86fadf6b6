"""Check files in fresh children of a tracing server, with a timeout and a memory limit per file.

A server process imports TensorFlow once; each file is then imported and traced in a
process forked from it before any user code ran (on Linux; elsewhere in a fresh
interpreter per file), so a file's answer never depends on the other files of the run,
their order or ``--jobs``. Every server and child runs in its own session: when a file
ends, times out or grows past the memory limit, its whole process group is killed,
and when the run ends or is cancelled, everything it started is.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import shutil
import subprocess
import tempfile
import threading
import time
from typing import IO, Iterator, cast
from dataclasses import dataclass

from xlalint.child_end import death, kill_group
from xlalint.gc_pause import gc_paused
from xlalint.preload_plan import preloads
from xlalint.python_child import module_command
from xlalint.wire import FileResult, Request, file_result

IMPORT_TIMEOUT_S = 300.0  # importing TensorFlow on a cold, busy machine
EXIT_WAIT_S = 30.0  # for the server to report a child it was told to kill
MEMORY_POLL_S = 0.1  # how often a process's resident memory is read while waiting for it
WAIT_S = 0.2  # the caller waits for answers in steps this short: a signal reaches it between them
PAGE = os.sysconf("SC_PAGE_SIZE")
# The server never starts with the working directory first on sys.path (module_command): a
# ./json.py must not shadow the standard library. The user's file directory comes first only in
# the child that imports that file, as in a plain `python file.py`.


class WorkerError(RuntimeError):
    """The tracing server could not start at all (e.g. TensorFlow is not installed)."""


@dataclass
class WorkerResult:
    tensorflow: str | None
    files: dict[str, FileResult]  # path -> the file's result


def _resident_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


class _Channel:
    """Line reader over the server's message pipe with a deadline and a memory limit on one process."""

    def __init__(self, fd: int, max_memory_mb: int):
        self.fd = fd
        self.max_bytes = max_memory_mb << 20  # 0: no limit
        self.buffer = bytearray()
        self.closed = False  # the server closed its end: it has exited or is exiting
        self.over_memory = False  # the watched process went over the limit

    def read(self, timeout: float, watch: int) -> dict | None:
        """The next message; a line that is not one (printed before the server took stdout over, e.g. by a
        sitecustomize) is skipped."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._line(deadline, watch)
            if line is None:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and "type" in message:
                return message

    def _line(self, deadline: float, watch: int) -> bytes | None:
        end = self.buffer.find(b"\n")
        while end < 0:
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return None
            ready = select.select([self.fd], [], [], min(left, MEMORY_POLL_S) if self.max_bytes else left)[0]
            if self.max_bytes and _resident_bytes(watch) > self.max_bytes:
                self.over_memory = True
                return None
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
            end = self.buffer.find(b"\n")
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return line


class _Server:
    """One tracing server: TensorFlow imported, ready to check files one at a time."""

    def __init__(self, env: dict, workdir: str, max_memory_mb: int, preload: list[str]):
        self.workdir = workdir
        self.max_memory_mb = max_memory_mb
        self.child: int | None = None  # the process checking a file right now
        self.log = tempfile.NamedTemporaryFile(dir=workdir, prefix="server-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(module_command("xlalint.backend.worker", *preload), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env=env, cwd=os.getcwd(),
                                     start_new_session=True)
        self.log.close()  # the server has its own descriptor for it
        self.requests, self.answers = cast(IO[bytes], self.proc.stdin), cast(IO[bytes], self.proc.stdout)  # both piped
        self.channel = _Channel(self.answers.fileno(), max_memory_mb)

    def wait_ready(self) -> None:
        """Wait for the server's TensorFlow import; WorkerError when it fails."""
        ready = self.channel.read(IMPORT_TIMEOUT_S, self.proc.pid)
        if ready is None or ready["type"] == "fatal":
            self.kill()
            reason = ready["message"] if ready else (
                f"it exceeded the memory limit of {self.max_memory_mb} MB (see --max-memory)"
                if self.channel.over_memory else death(self.proc.wait(), self.log.name))
            raise WorkerError(f"could not start the TensorFlow worker: {reason}")
        self.tensorflow = ready["tensorflow"]
        self.forks = ready.get("fork", False)
        self.threaded = ready.get("threaded", [])  # preloaded libraries that started threads: replace it

    @property
    def alive(self) -> bool:
        return not self.channel.closed and self.proc.poll() is None

    def kill(self) -> None:
        """Kill the file's process group and the server's, now, and close the pipes to it."""
        kill_group(self.child)
        kill_group(self.proc.pid)
        self.proc.wait()
        self.requests.close()
        self.answers.close()

    def check(self, request: Request, number: int, timeout: float, progress) -> FileResult:
        """One file's result; every failure (crash, exit, timeout, memory) becomes its ``error``."""
        files = {"result": os.path.join(self.workdir, f"{number}.json"),
                 "log": os.path.join(self.workdir, f"{number}.log")}
        try:
            self.requests.write((json.dumps({**request, **files}) + "\n").encode())
            self.requests.flush()
            start = self.channel.read(IMPORT_TIMEOUT_S, self.proc.pid)
        except OSError:  # the server died since it was last asked
            start = None
        if start is None or start["type"] != "start":  # a server that does not start the file is replaced
            stopped = None if self.proc.poll() is not None else (
                f"the tracing server exceeded the memory limit of {self.max_memory_mb} MB (see --max-memory)"
                if self.channel.over_memory else "the tracing server stopped answering")
            self.kill()
            return self._outcome(request, files, None, stopped)
        self.child = start["pid"]
        if progress:
            progress(request["path"])
        end = self.channel.read(timeout, self.child)
        stopped = None
        if end is None and not self.channel.closed:  # too slow or too big: kill it, then hear its end
            stopped = (f"exceeded the memory limit of {self.max_memory_mb} MB while importing or tracing "
                       "(see --max-memory)" if self.channel.over_memory
                       else f"timed out after {timeout:g}s while importing or tracing (see --timeout)")
            self.channel.over_memory = False
            kill_group(self.child)
            if self.forks:
                end = self.channel.read(EXIT_WAIT_S, self.proc.pid)
        result = self._outcome(request, files, end, stopped)
        if not self.forks or end is None:
            self.kill()  # a server that does not fork has checked its one file; one that says nothing is replaced
        self.child = None
        return result

    def _outcome(self, request: Request, files: dict, end: dict | None, stopped: str | None) -> FileResult:
        """The file's result, or why there is none: only a check that finished writes the result file."""
        try:
            with open(files["result"], encoding="utf-8") as handle, gc_paused():
                return json.load(handle)
        except (OSError, ValueError):
            error = stopped or death(end["code"] if end else self.proc.wait(), files["log"])
            return file_result(request["path"], error)
        finally:  # a run of many files keeps none of them on disk
            for path in files.values():
                with contextlib.suppress(OSError):
                    os.unlink(path)


class Tracing:
    """The servers of one run, the files still to check, and their answers as they come."""

    def __init__(self, requests: list[Request], timeout: float, progress, max_memory_mb: int):
        self.todo: queue.Queue = queue.Queue()
        for number, request in enumerate(requests):
            self.todo.put((number, request))
        self.count = len(requests)
        self.done: queue.Queue = queue.Queue()  # (path, result) as each file's check ends
        self.timeout, self.progress, self.max_memory_mb = timeout, progress, max_memory_mb
        self.tensorflow: str | None = None
        self.failure: BaseException | None = None
        self.servers: list[_Server] = []
        self.lock = threading.Lock()
        self.workdir = tempfile.mkdtemp(prefix="xlalint-")
        self.preload = preloads([r["path"] for r in requests if not r.get("saved_model")])
        # TMPDIR: AutoGraph writes a module file per converted function and removes it only at a
        # normal exit, which a forked child never makes; the run's folder goes with the run.
        self.env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
                        TMPDIR=self.workdir)
        if not any((verify := r.get("verify")) and verify["device"] in (None, "gpu") for r in requests):
            self.env["CUDA_VISIBLE_DEVICES"] = ""  # trace what a CPU builds: Keras builds cuDNN ops where it sees a GPU

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
                    server = self._start()
                self.done.put((request["path"], server.check(request, number, self.timeout, self.progress)))
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            self.failure = self.failure or error
        finally:
            if server is not None:
                server.kill()

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
            yield answer

    def _start(self) -> _Server:
        """A new server; one whose preloads started threads is replaced by one without them."""
        server = _Server(self.env, self.workdir, self.max_memory_mb, self.preload)
        with self.lock:  # known to close() while it imports TensorFlow: an interrupt then kills it too
            self.servers.append(server)
            stopped = self.failure
        if stopped is not None:
            server.kill()
            raise stopped
        server.wait_ready()
        with self.lock:
            self.tensorflow = server.tensorflow
        if server.threaded and server.forks:
            server.kill()
            self.preload = [name for name in self.preload if name not in server.threaded]
            return self._start()
        return server

    def close(self) -> None:
        """Kill every process of the run and remove its files."""
        self.failure = self.failure or WorkerError("the run was stopped")
        with self.lock:
            for server in self.servers:
                server.kill()
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
    tracing = Tracing(requests, timeout, progress, max_memory_mb)
    for _ in range(max(1, min(jobs, len(requests)))):
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
