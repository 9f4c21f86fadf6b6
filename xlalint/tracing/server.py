"""The parent's side of a TensorFlow server (``backend/fork_server.py``): start it, hand it requests, kill it.

The check command's tracing server and ``xlalint run``'s are started, asked and ended the same
way. Each server runs in its own session, and so does each child it forks: a child that ends,
times out or grows past the memory limit is killed with its whole process group, and a server
that is closed goes with everything it started. A ready server can also be cloned (``Server.clone``):
forked by itself, TensorFlow already imported, served like any other.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import time
from typing import IO, Callable, cast

from xlalint.process.child_end import death, kill_group
from xlalint.process.python_child import module_command

IMPORT_TIMEOUT_S = 300.0  # importing TensorFlow on a cold, busy machine
EXIT_WAIT_S = 30.0  # for the server to report a child it was told to kill
MEMORY_POLL_S = 0.1  # how often a process's resident memory is read while waiting for it
PAGE = os.sysconf("SC_PAGE_SIZE")
# A server never starts with the working directory first on sys.path (module_command): a
# ./json.py must not shadow the standard library. The user's directory comes first only in the
# child that runs the user's code, as in a plain `python file.py`.


class WorkerError(RuntimeError):
    """The server could not start at all (e.g. TensorFlow is not installed)."""


class CloneFailed(WorkerError):
    """This process could not make or open a clone's FIFOs (a file system without FIFOs, no descriptor left):
    the server itself may be fine."""


def _resident_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _wait_gone(pid: int) -> None:
    """Wait until a process that is not this one's child has ended (Linux pidfd; at most EXIT_WAIT_S)."""
    with contextlib.suppress(OSError, AttributeError):  # gone and reaped already, or no pidfd here
        handle = os.pidfd_open(pid)
        try:
            select.select([handle], [], [], EXIT_WAIT_S)
        finally:
            os.close(handle)


class Channel:
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

    def ended(self) -> bool:
        """Whether the server closed its end, seen without waiting (what it wrote meanwhile is kept)."""
        if not self.closed and select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, 1 << 16)
            self.closed = not chunk
            self.buffer += chunk
        return self.closed


class Server:
    """One server: TensorFlow imported, ready to serve requests one at a time, each in a child. ``name`` is what
    messages call it. A server started here has its ``proc``; a clone (forked by another server, which alone
    sees its exit status) has none, and its end shows as its channel closing."""

    def __init__(self, name: str, pid: int, requests: IO[bytes], answers: IO[bytes], log: str, max_memory_mb: int,
                 proc: subprocess.Popen | None = None):
        self.name, self.pid, self.proc, self.log = name, pid, proc, log
        self.max_memory_mb = max_memory_mb
        self.child: int | None = None  # the process serving a request right now
        self.requests, self.answers = requests, answers
        self.channel = Channel(answers.fileno(), max_memory_mb)
        self.tensorflow: str | None = None
        self.forks = False
        self.threaded: list[str] = []  # preloaded libraries that started threads: replace it

    def wait_ready(self) -> None:
        """Wait for the server's TensorFlow import; WorkerError when it fails."""
        ready = self.channel.read(IMPORT_TIMEOUT_S, self.pid)
        if ready is None or ready["type"] == "fatal":
            self.kill()
            reason = ready["message"] if ready else (
                f"it exceeded the memory limit of {self.max_memory_mb} MB (see --max-memory)"
                if self.channel.over_memory else death(self.exit_code(), self.log))
            raise WorkerError(f"could not start the TensorFlow worker: {reason}")
        self.tensorflow = ready["tensorflow"]
        self.forks = ready.get("fork", False)
        self.threaded = ready.get("threaded", [])

    def clone(self, workdir: str) -> Server:
        """A copy of this ready, idle, forking server, forked by it (nothing is imported again); it dies with
        this one. It serves two FIFOs made in ``workdir``; CloneFailed when they cannot be made or opened here,
        WorkerError when this server does not answer."""
        folder = tempfile.mkdtemp(dir=workdir, prefix="clone-")
        paths = {name: os.path.join(folder, name) for name in ("requests", "messages", "log")}
        fds: list[int] = []
        failure: OSError | None = None
        try:
            for fifo in ("requests", "messages"):
                os.mkfifo(paths[fifo], 0o600)
            # Neither open waits (one without blocking, one for reading and writing); the server opens the
            # other ends before it forks, so the copy's channel never reads as closed before the copy exists.
            fds += [os.open(paths["messages"], os.O_RDONLY | os.O_NONBLOCK), os.open(paths["requests"], os.O_RDWR)]
            answer = self._ask({"clone": paths}, EXIT_WAIT_S)  # a fork: far less than an import
            fds.append(os.open(paths["requests"], os.O_WRONLY))  # the copy has the reading end: a plain writer
        except OSError as error:  # a copy already forked ends as its requests do: when these FIFOs close
            answer, failure = None, error
        finally:
            for fifo in ("requests", "messages"):
                with contextlib.suppress(OSError):
                    os.unlink(paths[fifo])
        if answer is None or answer["type"] != "clone":
            for fd in fds:
                os.close(fd)
            if failure is not None:
                raise CloneFailed(f"could not clone the {self.name}: {failure}") from failure
            raise WorkerError(f"could not clone the {self.name}: {self.stopped() or 'it exited'}")
        answers, both, requests = fds
        os.close(both)  # from now on a dead copy is a broken pipe
        os.set_blocking(answers, True)
        copy = Server(self.name, answer["pid"], os.fdopen(requests, "wb"), os.fdopen(answers, "rb", buffering=0),
                      paths["log"], self.max_memory_mb)
        copy.tensorflow, copy.forks = self.tensorflow, self.forks
        return copy

    def _ask(self, message: dict, timeout: float = IMPORT_TIMEOUT_S) -> dict | None:
        """Send the server one message and read its answer; None when it died or stopped answering."""
        try:
            self.requests.write((json.dumps(message) + "\n").encode())
            self.requests.flush()
            return self.channel.read(timeout, self.pid)
        except OSError:
            return None

    @property
    def alive(self) -> bool:
        return not self.channel.ended() and (self.proc is None or self.proc.poll() is None)

    def exit_code(self) -> int:
        """The server's exit code, once it has ended; for a clone, SIGKILL: its status is its parent's to read,
        and a request's child running when it ended was killed with it (``die_with_parent``)."""
        return -signal.SIGKILL if self.proc is None else self.proc.wait()

    def kill(self) -> None:
        """Kill the child's process group and the server's, now, and close the pipes to it; once only (a
        clone's pid, once its parent has reaped it, may be another process's)."""
        if self.answers.closed:
            return
        self.end_processes()
        if self.proc is not None:
            self.proc.wait()
        else:
            _wait_gone(self.pid)
        self._close_requests()
        self.answers.close()
        self.channel.closed = True

    def end_processes(self) -> None:
        """Kill the child's process group and the server's, leaving the pipes to the thread that may be reading
        them (it sees the server end); ``kill`` does this and closes them."""
        if not self.answers.closed:
            kill_group(self.child)
            kill_group(self.pid)

    def _close_requests(self) -> None:
        """Close the request pipe. A request still buffered there (its flush failed: the server had died) is
        dropped: flushing it again would only fail again."""
        with contextlib.suppress(OSError):
            self.requests.close()

    def stop(self) -> None:
        """End the server in order: no more requests, then its exit (it reaps its clones first), at most
        EXIT_WAIT_S before it is killed."""
        self._close_requests()
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(EXIT_WAIT_S)
        self.kill()

    def start(self, request: dict) -> int | None:
        """Hand the server a request; the pid of the child serving it, or None when the server did not start
        one (it died since it was last asked, or stopped answering)."""
        start = self._ask(request)
        self.child = start["pid"] if start is not None and start["type"] == "start" else None
        return self.child

    def finish(self, timeout: float) -> tuple[dict | None, str | None]:
        """Wait for the child to end: ``(its exit message or None, why it was killed: "memory", "timeout" or
        None)``. A child past ``timeout`` or the memory limit is killed with its group, then its end heard."""
        assert self.child is not None
        end = self.channel.read(timeout, self.child)
        killed = None
        if end is None and not self.channel.closed:
            killed = "memory" if self.channel.over_memory else "timeout"
            self.channel.over_memory = False
            kill_group(self.child)
            if self.forks:
                end = self.channel.read(EXIT_WAIT_S, self.pid)
        return end, killed

    def done(self, end: dict | None) -> None:
        """After a child's end: a server that does not fork has served its one request, and one that said
        nothing of the child's end is replaced; both are killed (with the child, if it still runs)."""
        if not self.forks or end is None:
            self.kill()
        self.child = None

    def stopped(self, request: str | None = None) -> str | None:
        """Why a server that did not start a request's child is no use; where it exited, None, or given what the
        ``request`` was ("the file"), that it ended before it started it."""
        if not self.alive:
            return request and f"the {self.name} ended before it started {request}"
        return (f"the {self.name} exceeded the memory limit of {self.max_memory_mb} MB (see --max-memory)"
                if self.channel.over_memory else f"the {self.name} stopped answering")


def spawn(module: str, args: list[str], env: dict, workdir: str, name: str, max_memory_mb: int = 0) -> Server:
    """A new server process (``python -m module args...``) in its own session, still importing TensorFlow."""
    log = tempfile.NamedTemporaryFile(dir=workdir, prefix="server-", suffix=".log", delete=False)
    proc = subprocess.Popen(module_command(module, *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=log, env=env, cwd=os.getcwd(), start_new_session=True)
    log.close()  # the server has its own descriptor for it
    return Server(name, proc.pid, cast(IO[bytes], proc.stdin), cast(IO[bytes], proc.stdout), log.name,  # both piped
                  max_memory_mb, proc)


def start_server(module: str, preload: list[str], env: dict, workdir: str, keep: Callable[[Server], None],
                 name: str, max_memory_mb: int = 0) -> Server:
    """A new server, ready; handed to ``keep`` as soon as it is started, before it imports TensorFlow (so an
    interrupt can kill it; ``keep`` may raise to stop there). One whose preloads started threads is
    replaced by one without them (``preload`` loses them, for the next servers too)."""
    while True:
        server = spawn(module, preload, env, workdir, name, max_memory_mb)
        keep(server)
        server.wait_ready()
        if not (server.threaded and server.forks):
            return server
        server.kill()
        preload[:] = [library for library in preload if library not in server.threaded]
